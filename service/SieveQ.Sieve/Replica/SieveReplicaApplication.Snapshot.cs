using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Replica;

public sealed partial class SieveReplicaApplication
{
    /// <summary>
    /// All agreed state, byte-deterministic: sorted maps only, integers only. Layout (all
    /// little-endian): the snapshot tag, then <c>i64 now | i64 processed | i64 lastCapacityNotice</c>,
    /// the senders, pre-SQs and receiver queues (each <c>u32 count</c> then <c>u32 id | record</c> in
    /// ascending id order), the reorder buffer, the rules' own state (<c>u32 len | bytes</c>) and the administrative
    /// state (<see cref="AdministrativeState"/>), the enrolment changes (<see cref="EnrolmentChangeTable"/>) and the
    /// senders' pending loss claims (<c>u32 count</c> then <c>u32 id | seq lastSent | i64 at | u32 lastLossPpm</c>) and
    /// their last moves between pre-SQs (<c>u32 count</c> then <c>u32 id | u32 from | i64 at | u8 forLoss</c>), and the id
    /// leases (<see cref="IdLeaseTable"/>); each of the last five is absent in snapshots taken before it existed, read as empty.
    /// </summary>
    public byte[] TakeSnapshot()
    {
        using var w = new CanonicalWriter(4096);
        w.Raw(DomainTags.ReplicaSnapshot);
        w.I64(_now);
        w.I64(_processed);
        w.I64(_lastCapacityNoticeMs);
        w.Id(_senders.Count);
        foreach (var (id, s) in _senders)
        {
            w.Id(id);
            s.WriteTo(w);
        }
        w.Id(_preSqs.Count);
        foreach (var (id, p) in _preSqs)
        {
            w.Id(id);
            p.WriteTo(w);
        }
        w.Id(_receivers.Count);
        foreach (var (id, q) in _receivers)
        {
            w.Id(id);
            q.WriteTo(w);
        }
        _reorder.WriteTo(w);
        w.Bytes(_rules.SnapshotState());
        _admin.WriteTo(w);
        _enrolment.WriteTo(w);
        WriteLossClaims(w);
        WriteMoves(w);
        _leases.WriteTo(w);
        return w.ToArray();
    }

    /// <summary>Replaces all agreed state; a malformed snapshot throws <see cref="MalformedEnvelopeException"/> and changes nothing.</summary>
    public void RestoreSnapshot(ReadOnlySpan<byte> snapshot)
    {
        var r = new CanonicalReader(snapshot);
        if (!r.Take(DomainTags.ReplicaSnapshot.Length, "snapshot tag").SequenceEqual(DomainTags.ReplicaSnapshot))
        {
            throw new MalformedEnvelopeException("not a replica sieve snapshot");
        }
        var now = r.I64("now");
        var processed = r.I64("processed");
        var lastNotice = r.I64("last capacity notice");
        var senders = ReadMap(ref r, "senders", (ref CanonicalReader rr) => SenderRecord.ReadFrom(ref rr, _options));
        var preSqs = ReadMap(ref r, "pre-SQs", PreSqRecord.ReadFrom);
        var receivers = ReadMap(ref r, "receivers", ReceiverQueue.ReadFrom);
        var reorder = ReorderBuffer.ReadFrom(ref r);
        var rules = r.Bytes(int.MaxValue, "rules state");
        var admin = r.Remaining == 0 ? new AdministrativeState() : AdministrativeState.ReadFrom(ref r);
        var enrolment = r.Remaining == 0 ? new EnrolmentChangeTable() : EnrolmentChangeTable.ReadFrom(ref r, EnrolmentChangeTable.MaxEntriesLimit);
        if (r.Remaining > 0)
        {
            ReadLossClaims(ref r, senders);
        }
        if (r.Remaining > 0)
        {
            ReadMoves(ref r, senders);
        }
        var leases = r.Remaining == 0 ? new IdLeaseTable() : IdLeaseTable.ReadFrom(ref r);
        r.End("replica snapshot");
        _rules.RestoreState(rules);
        _now = now;
        _processed = processed;
        _lastCapacityNoticeMs = lastNotice;
        _senders = senders;
        _preSqs = preSqs;
        _receivers = receivers;
        _reorder = reorder;
        _admin = admin;
        _enrolment = enrolment;
        _leases = leases;
        _keys.SetEnrolmentChanges(enrolment.Entries);
        _pendingOutputs.Clear();
        // Outputs of executions the snapshot replaced describe a state that no longer exists.
        _outbox.Drain();
        _restores++;
        _quarantineCandidates.Clear();
        foreach (var (id, s) in _senders)
        {
            if (s.Suspicion.Quarantined)
            {
                _quarantineCandidates.Add(id);
            }
        }
        RebuildAssignments();
        PublishReadModel(rebuildQueues: true);
    }

    /// <summary>Kept apart from the sender records so snapshots taken before loss had a grace period still read.</summary>
    private void WriteLossClaims(CanonicalWriter w)
    {
        var claimed = _senders.Where(e => !e.Value.PendingLossClaim.IsNone || e.Value.LastLossPpm != 0).ToArray();
        w.Id(claimed.Length);
        foreach (var (id, s) in claimed)
        {
            w.Id(id);
            w.Seq(s.PendingLossClaim.LastSent);
            w.I64(s.PendingLossClaim.AtMs);
            w.Id(s.LastLossPpm);
        }
    }

    private static void ReadLossClaims(ref CanonicalReader r, SortedDictionary<int, SenderRecord> senders) =>
        ReadSenderSection(ref r, senders, "loss claims", (ref CanonicalReader rr, SenderRecord s) =>
        {
            var lastSent = rr.Seq("claimed last sent");
            var at = rr.I64("claim time");
            var ppm = rr.Id("last loss ppm");
            if (ppm > 1_000_000)
            {
                throw new MalformedEnvelopeException("loss rate above 1,000,000 ppm");
            }
            s.PendingLossClaim = new LossClaim(lastSent, at);
            s.LastLossPpm = ppm;
        });

    private void WriteMoves(CanonicalWriter w)
    {
        var moved = _senders.Where(e => !e.Value.LastMove.IsNone).ToArray();
        w.Id(moved.Length);
        foreach (var (id, s) in moved)
        {
            w.Id(id);
            w.Id(s.LastMove.From);
            w.I64(s.LastMove.AtMs);
            w.Bool(s.LastMove.ForLoss);
        }
    }

    private static void ReadMoves(ref CanonicalReader r, SortedDictionary<int, SenderRecord> senders) =>
        ReadSenderSection(ref r, senders, "pre-SQ moves", (ref CanonicalReader rr, SenderRecord s) =>
            s.LastMove = new PreSqMove(rr.Id("pre-SQ left"), rr.I64("move time"), rr.Bool("moved for loss")));

    private delegate void SenderEntryReader(ref CanonicalReader r, SenderRecord sender);

    /// <summary>A section of per-sender entries kept apart from the sender records: a count, then each known sender's id in ascending order and its entry.</summary>
    private static void ReadSenderSection(ref CanonicalReader r, SortedDictionary<int, SenderRecord> senders, string what, SenderEntryReader read)
    {
        var n = r.Count(senders.Count, what);
        var previous = -1;
        for (var i = 0; i < n; i++)
        {
            var id = r.Id(what + " sender");
            if (id <= previous || !senders.TryGetValue(id, out var s))
            {
                throw new MalformedEnvelopeException($"{what} out of order or of an unknown sender");
            }
            previous = id;
            read(ref r, s);
        }
    }

    private delegate T RecordReader<T>(ref CanonicalReader r);

    private static SortedDictionary<int, T> ReadMap<T>(ref CanonicalReader r, string what, RecordReader<T> read)
    {
        var n = r.Count(EnvelopeLimits.MaxItems * 16, what);
        var map = new SortedDictionary<int, T>();
        var previous = -1;
        for (var i = 0; i < n; i++)
        {
            var id = r.Id(what + " id");
            if (id <= previous)
            {
                throw new MalformedEnvelopeException($"{what} not in ascending order");
            }
            previous = id;
            map.Add(id, read(ref r));
        }
        return map;
    }
}
