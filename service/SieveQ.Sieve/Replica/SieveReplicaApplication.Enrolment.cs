using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Replica;

public sealed partial class SieveReplicaApplication
{
    private SenderEnrolmentTable _enrolment = new();

    /// <summary>Changes of the enrolment applied through the ordering (agreed state; execution thread).</summary>
    public long EnrolmentVersion => _enrolment.Version;

    /// <summary>Whether the sender is enrolled now, statically or through the ordering, and not revoked (execution thread).</summary>
    public bool IsSenderEnrolled(int sender) => _keys.IsSender(sender);

    /// <summary>
    /// Enrol or revoke a sender, after the administrator signature and nonce were checked. Enrolment: the proof of
    /// possession holds, the id was never used (static, enrolled or revoked), the table has room. Revocation: the
    /// sender is enrolled now; its held messages are let go and its record dropped, and its id is burned.
    /// </summary>
    private AdminCommandResult ApplyEnrolmentChange(AdminCommand command)
    {
        return command.Op == AdminOp.EnrolSender ? Enrol(command) : Revoke(command);
    }

    private AdminCommandResult Enrol(AdminCommand command)
    {
        var claim = command.Claim!;
        if (EnrolmentProof.Problem(claim) is { } problem)
        {
            return Refused($"enrol sender '{claim.Name}': {problem}");
        }
        var id = command.Target == AdminCommand.NextFreeId ? NextFreeSenderId() : command.Target;
        if (_keys.IsStaticSender(id) || _enrolment.Entries.ContainsKey(id))
        {
            var how = _enrolment.Entries.TryGetValue(id, out var e) && e is null ? "revoked, and ids are never reused" : "enrolled";
            return Refused($"enrol sender {id} ('{claim.Name}'): id {id} is taken ({how})");
        }
        if (_enrolment.Entries.Count >= _options.MaxEnrolmentChanges)
        {
            return Refused($"enrol sender {id}: the enrolment-change table is full ({_options.MaxEnrolmentChanges} entries, maxEnrolmentChanges)");
        }
        _admin.LastNonce = command.Nonce;
        _enrolment.Entries.Add(id, new EnrolledSender(id, claim.Name, claim.SignaturePublicKey.ToArray(), claim.AgreementPublicKey.ToArray()));
        _enrolment.Version++;
        _keys.SetEnrolmentChanges(_enrolment.Entries);
        SieveMetrics.EnrolmentChange(Component, enrolled: true);
        return new AdminCommandResult(true, _admin.LastNonce, $"enrol sender {id} ('{claim.Name}'): applied (enrolment version {_enrolment.Version})");
    }

    private AdminCommandResult Revoke(AdminCommand command)
    {
        var id = command.Target;
        if (!_keys.IsSender(id))
        {
            return Refused($"revoke sender {id}: not enrolled (never, or already revoked)");
        }
        if (!_enrolment.Entries.ContainsKey(id) && _enrolment.Entries.Count >= _options.MaxEnrolmentChanges)
        {
            return Refused($"revoke sender {id}: the enrolment-change table is full ({_options.MaxEnrolmentChanges} entries, maxEnrolmentChanges)");
        }
        _admin.LastNonce = command.Nonce;
        _enrolment.Entries[id] = null;
        _enrolment.Version++;
        _keys.SetEnrolmentChanges(_enrolment.Entries);
        _admin.QuarantinedSenders.Remove(id);
        var released = 0;
        while (_reorder.TakeLowest(id, long.MaxValue) is { } h)
        {
            Unreserve(h);
            released++;
        }
        _senders.Remove(id);
        _quarantineCandidates.Remove(id);
        _assignments = _assignments.Remove(id);
        SieveMetrics.EnrolmentChange(Component, enrolled: false);
        return new AdminCommandResult(true, _admin.LastNonce,
            $"revoke sender {id}: applied (enrolment version {_enrolment.Version}; {released} held messages released)");
    }

    /// <summary>Above every sender and receiver id the deployment ever used, so a new sender collides with nobody.</summary>
    private int NextFreeSenderId()
    {
        var max = 0;
        foreach (var s in _keys.Enrolment.Senders)
        {
            max = Math.Max(max, s.Id);
        }
        foreach (var r in _keys.Enrolment.Receivers)
        {
            max = Math.Max(max, r.Id);
        }
        if (_enrolment.Entries.Count > 0)
        {
            max = Math.Max(max, _enrolment.Entries.Keys.Max());
        }
        return max + 1;
    }

    private static ReadOnlyMemory<byte>? EnrolmentQueryIn(OrderingRequest payload) =>
        payload.Items.Count == 1 && payload.Items[0].Span[0] == (byte)StructureKind.EnrolmentQuery ? payload.Items[0] : (ReadOnlyMemory<byte>?)null;

    /// <summary>A page of the agreed enrolment-change table; reads nothing but agreed state, changes nothing.</summary>
    private byte[] ExecuteEnrolmentQuery(ReadOnlyMemory<byte> bytes, ref Tally t)
    {
        EnrolmentQuery q;
        try
        {
            q = EnrolmentViewCodec.DecodeQuery(bytes.Span);
        }
        catch (MalformedEnvelopeException)
        {
            Drop(SieveStage.Parse, DropReason.Malformed, ref t);
            return EnrolmentViewCodec.EncodeView(new EnrolmentView(_enrolment.Version, true, []));
        }
        if (q.KnownVersion == _enrolment.Version)
        {
            return EnrolmentViewCodec.EncodeView(new EnrolmentView(_enrolment.Version, true, []));
        }
        var page = new List<KeyValuePair<int, EnrolledSender?>>(EnrolmentViewCodec.MaxEntries);
        var complete = true;
        foreach (var entry in _enrolment.Entries)
        {
            if (entry.Key < q.FromId)
            {
                continue;
            }
            if (page.Count == EnrolmentViewCodec.MaxEntries)
            {
                complete = false;
                break;
            }
            page.Add(entry);
        }
        return EnrolmentViewCodec.EncodeView(new EnrolmentView(_enrolment.Version, complete, page));
    }
}
