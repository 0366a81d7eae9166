using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Replica;

public sealed partial class SieveReplicaApplication
{
    private EnrolmentChangeTable _enrolment = new();

    /// <summary>Changes of the enrolment applied through the ordering (agreed state; execution thread).</summary>
    public long EnrolmentVersion => _enrolment.Version;

    /// <summary>Whether the sender is enrolled now, statically or through the ordering, and not revoked (execution thread).</summary>
    public bool IsSenderEnrolled(int sender) => _keys.IsSender(sender);

    /// <summary>Whether the receiver is enrolled now, statically or through the ordering, and not revoked (execution thread).</summary>
    public bool IsReceiverEnrolled(int receiver) => _keys.IsReceiver(receiver);

    /// <summary>
    /// Enrol or revoke a sender or a receiver, after the administrator signature and nonce were checked. Enrolment: the
    /// proof of possession holds, the id was never used through the ordering and the static enrolment does not hold it
    /// in that role, the table has room. Revocation: the party is enrolled now in the role named; the id is burned in
    /// every role it had (a party that both sends and receives under one id is one holder of one key), and what the sieve
    /// keeps for it is let go: a sender's held messages and record, a receiver's queue (its undelivered messages).
    /// </summary>
    private AdminCommandResult ApplyEnrolmentChange(AdminCommand command) => command.Op switch
    {
        AdminOp.EnrolSender => Enrol(command, receiver: false),
        AdminOp.EnrolReceiver => Enrol(command, receiver: true),
        AdminOp.RevokeReceiver => Revoke(command, receiver: true),
        _ => Revoke(command, receiver: false),
    };

    private AdminCommandResult Enrol(AdminCommand command, bool receiver)
    {
        var role = receiver ? "receiver" : "sender";
        var claim = command.Claim!;
        if (EnrolmentProof.Problem(claim) is { } problem)
        {
            return Refused($"enrol {role} '{claim.Name}': {problem}");
        }
        var id = command.Target == AdminCommand.NextFreeId ? NextFreeId() : command.Target;
        if ((receiver ? _keys.IsStaticReceiver(id) : _keys.IsStaticSender(id)) || _enrolment.Entries.ContainsKey(id))
        {
            var how = _enrolment.Entries.TryGetValue(id, out var e)
                ? e is null ? "revoked, and ids are never reused" : $"enrolled as {e.Role} {id}"
                : $"{role} {id} of the enrolment file";
            return Refused($"enrol {role} {id} ('{claim.Name}'): id {id} is taken ({how})");
        }
        if (_enrolment.Entries.Count >= _options.MaxEnrolmentChanges)
        {
            return Refused($"enrol {role} {id}: the enrolment-change table is full ({_options.MaxEnrolmentChanges} entries, maxEnrolmentChanges)");
        }
        _admin.LastNonce = command.Nonce;
        _enrolment.Entries.Add(id, new EnrolledParty(id, receiver, claim.Name, claim.SignaturePublicKey.ToArray(), claim.AgreementPublicKey.ToArray()));
        _enrolment.Version++;
        _keys.SetEnrolmentChanges(_enrolment.Entries);
        SieveMetrics.EnrolmentChange(Component, enrolled: true);
        return new AdminCommandResult(true, _admin.LastNonce, $"enrol {role} {id} ('{claim.Name}'): applied (enrolment version {_enrolment.Version})");
    }

    private AdminCommandResult Revoke(AdminCommand command, bool receiver)
    {
        var id = command.Target;
        var role = receiver ? "receiver" : "sender";
        if (!(receiver ? _keys.IsReceiver(id) : _keys.IsSender(id)))
        {
            return Refused($"revoke {role} {id}: not enrolled (never, or already revoked)");
        }
        if (!_enrolment.Entries.ContainsKey(id) && _enrolment.Entries.Count >= _options.MaxEnrolmentChanges)
        {
            return Refused($"revoke {role} {id}: the enrolment-change table is full ({_options.MaxEnrolmentChanges} entries, maxEnrolmentChanges)");
        }
        var (wasSender, wasReceiver) = (_keys.IsSender(id), _keys.IsReceiver(id));
        _admin.LastNonce = command.Nonce;
        _enrolment.Entries[id] = null;
        _enrolment.Version++;
        _keys.SetEnrolmentChanges(_enrolment.Entries);
        var released = new List<string>(2);
        if (wasSender)
        {
            released.Add($"{ReleaseSender(id)} held messages released");
        }
        if (wasReceiver)
        {
            released.Add($"{ReleaseReceiver(id)} queued messages let go");
        }
        var both = wasSender && wasReceiver ? $"; id {id} was {(receiver ? "sender" : "receiver")} {id} too, revoked with it" : "";
        SieveMetrics.EnrolmentChange(Component, enrolled: false);
        return new AdminCommandResult(true, _admin.LastNonce,
            $"revoke {role} {id}: applied (enrolment version {_enrolment.Version}; {string.Join(", ", released)}{both})");
    }

    private int ReleaseSender(int id)
    {
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
        return released;
    }

    /// <summary>
    /// A revoked receiver's queue goes with it, and so do the approved messages of this execution not yet batched for
    /// it. Messages other senders hold for it ahead of a gap are judged when their turn comes, and rejected then
    /// (receiver not enrolled), so their senders learn it.
    /// </summary>
    private int ReleaseReceiver(int id)
    {
        var dropped = 0;
        if (_receivers.Remove(id, out var q))
        {
            dropped = q.Count;
        }
        _pendingOutputs.Remove(id);
        return dropped;
    }

    /// <summary>Above every sender and receiver id the deployment ever used, so a new party collides with nobody.</summary>
    private int NextFreeId()
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
        var page = new List<KeyValuePair<int, EnrolledParty?>>(EnrolmentViewCodec.MaxEntries);
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
