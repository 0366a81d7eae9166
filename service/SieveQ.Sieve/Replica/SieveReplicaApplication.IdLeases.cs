using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;

namespace SieveQ.Sieve.Replica;

public sealed partial class SieveReplicaApplication
{
    private IdLeaseTable _leases = new();

    /// <summary>Leases held now, at the agreed time (execution thread).</summary>
    public int IdLeasesHeld => _leases.HeldCount(_now);

    private static ReadOnlyMemory<byte>? IdLeaseIn(OrderingRequest payload) =>
        payload.Items.Count == 1 && payload.Items[0].Span[0] == (byte)StructureKind.IdLease ? payload.Items[0] : (ReadOnlyMemory<byte>?)null;

    /// <summary>
    /// Decides a lease request in agreed execution (so every correct replica answers the same bytes), whoever carried it:
    /// the party's own signature under its enrolled key authenticates it. Checked in this order: structure, the party
    /// enrolled now, the signature, the claimed time within the freshness window of the agreed time and after the
    /// holder's last request. A hold is granted when the id is free, its lease expired, or the claimant already holds
    /// it; otherwise the answer names the holder. A release ends the claimant's own lease only.
    /// <para>
    /// A pre-SQ checks structure and signature before it carries a request (<see cref="IdLeaseCheck"/>), and an id is
    /// never bound to another key, so a malformed or badly signed request is the carrier's fault: it counts against the
    /// carrying pre-SQ as the same faults in messages do. A party not enrolled, or a stale time, is not: the carrier's
    /// directory and clock may differ from the agreed ones.
    /// </para>
    /// </summary>
    private byte[] ExecuteIdLease(int carrier, ReadOnlyMemory<byte> bytes, ref Tally t)
    {
        IdLeaseRequest q;
        try
        {
            q = IdLeaseCodec.DecodeRequest(bytes);
        }
        catch (MalformedEnvelopeException e)
        {
            Drop(SieveStage.Parse, DropReason.Malformed, ref t);
            SuspectPreSq(carrier, _options.MalformedPreSqWeight);
            return LeaseRefused(LeaseParty.Sender, 0, $"malformed lease request: {e.Message}");
        }
        var name = q.Party == LeaseParty.Sender ? "sender" : "receiver";
        if (IdLeaseCheck.Judge(q, _keys, _now, "the agreed time") is { Problem: not IdLeaseProblem.None } refusal)
        {
            if (refusal.Problem == IdLeaseProblem.NotSigned)
            {
                Drop(SieveStage.ReplicaAdmission, DropReason.BadSignature, ref t);
                SuspectPreSq(carrier, _options.BadSignaturePreSqWeight);
            }
            return LeaseRefused(q.Party, q.Id, refusal.Reason);
        }
        var key = IdLeaseTable.Key(q.Party, q.Id);
        _leases.Entries.TryGetValue(key, out var entry);
        var own = entry is not null && CryptographicOperations.FixedTimeEquals(entry.Holder, q.Holder.Span);
        if (own && q.RequestedAtMs <= entry!.LastRequestMs)
        {
            return LeaseRefused(q.Party, q.Id, "a replay: the holder's requests must carry growing times");
        }
        if (q.Op == LeaseOp.Release)
        {
            if (!own || entry!.ExpiresAtMs <= _now)
            {
                return LeaseResult(LeaseOutcome.Released, q, _now, $"{name} {q.Id} was not held by this holder");
            }
            // Kept, expired, with the release's time: the holder's earlier requests stay replays.
            _leases.Entries[key] = entry with { ExpiresAtMs = _now, LastRequestMs = q.RequestedAtMs };
            return LeaseResult(LeaseOutcome.Released, q, _now, "released");
        }
        if (entry is not null && !own && entry.ExpiresAtMs > _now)
        {
            return IdLeaseCodec.EncodeResult(new IdLeaseResult(LeaseOutcome.HeldByOther, q.Party, q.Id, entry.ExpiresAtMs, entry.Holder, entry.Label,
                $"{name} {q.Id} is held by {entry.Label} for {(entry.ExpiresAtMs - _now + 999) / 1000} s more unless it renews"));
        }
        if (entry is null && !_leases.MakeRoom(_now))
        {
            return LeaseRefused(q.Party, q.Id, $"the id lease table is full ({IdLeaseTable.MaxEntries} entries)");
        }
        var expires = _now + IdLeaseTable.TermMs;
        _leases.Entries[key] = new IdLeaseTable.Entry(q.Holder.ToArray(), q.Label, expires, q.RequestedAtMs);
        var floor = q.Party == LeaseParty.Sender && _senders.TryGetValue(q.Id, out var s)
            ? Math.Max(s.Window.Highest, Sender.SenderSq.SequenceOfNonce(s.LastAckNonce))
            : 0;
        return LeaseResult(LeaseOutcome.Granted, q, expires, own ? "renewed" : "granted", floor);
    }

    private static byte[] LeaseResult(LeaseOutcome outcome, IdLeaseRequest q, long expires, string reason, long floor = 0) =>
        IdLeaseCodec.EncodeResult(new IdLeaseResult(outcome, q.Party, q.Id, expires, q.Holder, q.Label, reason, floor));

    private static byte[] LeaseRefused(LeaseParty party, int id, string reason) =>
        IdLeaseCodec.EncodeResult(new IdLeaseResult(LeaseOutcome.Refused, party, id, 0, ReadOnlyMemory<byte>.Empty, "", reason));
}
