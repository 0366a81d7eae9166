using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Replica;

public sealed partial class SieveReplicaApplication
{
    private AdministrativeState _admin = new();
    private long _adminCommandsApplied;
    private long _adminCommandsRefused;

    /// <summary>
    /// The administrator key the deployment pins, which administrator commands must be signed with; null refuses
    /// every administrator command. Every replica must be given the same key (replicated configuration).
    /// </summary>
    public AdministratorKey? Administrator { get; init; }

    /// <summary>Administrator commands applied since this replica started (local count, not agreed state).</summary>
    public long AdminCommandsApplied => _adminCommandsApplied;

    /// <summary>Administrator commands refused since this replica started (local count, not agreed state).</summary>
    public long AdminCommandsRefused => _adminCommandsRefused;

    /// <summary>Whether an administrator command quarantines the sender now (agreed state; execution thread).</summary>
    public bool IsSenderQuarantinedByAdministrator(int sender) => _admin.QuarantinedSenders.Contains(sender);

    /// <summary>Whether an administrator command quarantines the pre-SQ now (agreed state; execution thread).</summary>
    public bool IsPreSqQuarantinedByAdministrator(int preSq) => _admin.QuarantinedPreSqs.Contains(preSq);

    private static ReadOnlyMemory<byte>? AdminCommandIn(OrderingRequest payload)
    {
        foreach (var item in payload.Items)
        {
            if (item.Span[0] == (byte)StructureKind.AdminCommand)
            {
                return item;
            }
        }
        return null;
    }

    /// <summary>
    /// Self-authenticated by the pinned administrator key, so taken from any ordering client (a pre-SQ only carries
    /// it). It travels alone so that its request's result is the command's own outcome. Checked in this order:
    /// alone, structure, a key pinned, the signature, the nonce above the last applied, the party enrolled. The
    /// signature is verified here, in agreed execution, rather than ahead: commands are rare and a verdict computed
    /// here cannot differ between replicas. A refusal changes nothing but is agreed like an application.
    /// </summary>
    private byte[] ExecuteAdminCommand(OrderingRequest payload, ReadOnlyMemory<byte> bytes, ref Tally t)
    {
        var result = Apply(payload, bytes, ref t);
        if (result.Applied)
        {
            _adminCommandsApplied++;
        }
        else
        {
            _adminCommandsRefused++;
        }
        SieveMetrics.AdminCommand(Component, result.Applied);
        return AdminCommandResultCodec.Encode(result);
    }

    private AdminCommandResult Apply(OrderingRequest payload, ReadOnlyMemory<byte> bytes, ref Tally t)
    {
        if (payload.Items.Count != 1)
        {
            Drop(SieveStage.Parse, DropReason.Malformed, ref t, payload.Items.Count);
            SuspectPreSq(payload.Origin, _options.MalformedPreSqWeight);
            return Refused("an administrator command must be the only item of its ordering request");
        }
        AdminCommand command;
        try
        {
            command = AdminCommandCodec.Decode(bytes);
        }
        catch (MalformedEnvelopeException e)
        {
            Drop(SieveStage.Parse, DropReason.Malformed, ref t);
            return Refused(e.Message);
        }
        if (Administrator is null)
        {
            return Refused("this deployment pins no administrator key (deployment rules section), so the replicas take no administrator commands");
        }
        if (!Administrator.Verify(AdminCommandCodec.SignedBytes(command), command.Signature.Span))
        {
            Drop(SieveStage.ReplicaAdmission, DropReason.BadSignature, ref t);
            return Refused("not signed by the deployment's administrator key");
        }
        if (command.Nonce <= _admin.LastNonce)
        {
            return Refused($"nonce {command.Nonce} is not above the last applied administrator command's ({_admin.LastNonce}): a replay or an overtaken command");
        }
        if (command.ChangesEnrolment)
        {
            return ApplyEnrolmentChange(command);
        }
        if (command.ChangesRoutes)
        {
            return ApplyRouteChange(command);
        }
        var what = AdminCommandCodec.Describe(command.Op, command.Target);
        if (command.TargetsSender ? !_keys.IsSender(command.Target) : !_keys.IsPreSq(command.Target))
        {
            return Refused($"{what}: not enrolled");
        }
        _admin.LastNonce = command.Nonce;
        var set = command.TargetsSender ? _admin.QuarantinedSenders : _admin.QuarantinedPreSqs;
        string outcome;
        if (command.Quarantines)
        {
            outcome = set.Add(command.Target) ? "applied" : "applied (it was already quarantined by an administrator)";
        }
        else
        {
            var wasQuarantined = set.Remove(command.Target);
            // The override works both ways: readmission also forgets the evidence, or the counter would keep it out.
            if (command.TargetsSender)
            {
                SenderOf(command.Target).ClearSuspicion();
            }
            else
            {
                PreSqOf(command.Target).ClearSuspicion();
            }
            outcome = wasQuarantined ? "applied" : "applied (no administrator quarantine; its suspicion is cleared)";
        }
        return new AdminCommandResult(true, _admin.LastNonce, $"{what}: {outcome}");
    }

    private AdminCommandResult Refused(string reason) => new(false, _admin.LastNonce, "refused: " + reason);
}
