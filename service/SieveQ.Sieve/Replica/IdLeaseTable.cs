using System.Text;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Replica;

/// <summary>
/// Agreed state of id leases: which process run holds each sender or receiver id, until when (agreed time), and the
/// claimed time of its holder's last request (a request at or before it is a replay). An expired entry stays until its
/// last request is older than the freshness window, so a captured request can never be granted again; it is dropped
/// when the table needs room. Bounded by <see cref="MaxEntries"/>, and in practice by the enrolled parties, since only
/// an enrolled party's signed request makes an entry.
/// </summary>
public sealed class IdLeaseTable
{
    /// <summary>How long a granted lease lasts without being held again (agreed time). Holders renew at a third of it.</summary>
    public const long TermMs = 30_000;

    /// <summary>How far a request's claimed time may be from the agreed time.</summary>
    public const long FreshnessMs = 120_000;

    public const int MaxEntries = 16_384;

    /// <summary>An entry's worst-case encoding: party, id, holder, label with its length, expiry and last request.</summary>
    public const int MaxEntryBytes = 1 + 4 + IdLeaseCodec.HolderBytes + 4 + IdLeaseCodec.MaxLabelBytes + 8 + 8;

    /// <summary>The most entries a deployment can make: one per enrolled party, within <see cref="MaxEntries"/>.</summary>
    public static long WorstCaseBytes(int parties) => (long)Math.Min(MaxEntries, Math.Max(0, parties)) * MaxEntryBytes;

    /// <summary>One id's lease.</summary>
    public sealed record Entry(byte[] Holder, string Label, long ExpiresAtMs, long LastRequestMs);

    /// <summary>Entries by (party, id) as one key, ascending: party in the high half.</summary>
    public SortedDictionary<long, Entry> Entries { get; private init; } = [];

    public static long Key(LeaseParty party, int id) => ((long)party << 32) | (uint)id;

    /// <summary>Held (not expired) at <paramref name="nowMs"/>.</summary>
    public int HeldCount(long nowMs) => Entries.Values.Count(e => e.ExpiresAtMs > nowMs);

    /// <summary>Drops the entries no request can touch any more; true when there is room for one more.</summary>
    public bool MakeRoom(long nowMs)
    {
        if (Entries.Count < MaxEntries)
        {
            return true;
        }
        foreach (var key in Entries.Where(e => e.Value.ExpiresAtMs <= nowMs && e.Value.LastRequestMs < nowMs - FreshnessMs).Select(e => e.Key).ToList())
        {
            Entries.Remove(key);
        }
        return Entries.Count < MaxEntries;
    }

    /// <summary>Layout: <c>u32 n | n x (u8 party | u32 id | 16 holder | u32 len | label | i64 expiresAtMs | i64 lastRequestMs)</c>, keys ascending.</summary>
    public void WriteTo(CanonicalWriter w)
    {
        ArgumentNullException.ThrowIfNull(w);
        w.Id(Entries.Count);
        foreach (var (key, e) in Entries)
        {
            w.U8((byte)(key >> 32));
            w.Id((int)(uint)key);
            w.Raw(e.Holder);
            w.Bytes(Encoding.UTF8.GetBytes(e.Label));
            w.I64(e.ExpiresAtMs);
            w.I64(e.LastRequestMs);
        }
    }

    public static IdLeaseTable ReadFrom(ref CanonicalReader r)
    {
        var table = new IdLeaseTable();
        var n = r.Count(MaxEntries, "id leases");
        var previous = long.MinValue;
        for (var i = 0; i < n; i++)
        {
            var party = r.U8("lease party");
            if (party is not ((byte)LeaseParty.Sender or (byte)LeaseParty.Receiver))
            {
                throw new MalformedEnvelopeException($"id lease table: unknown party kind {party}");
            }
            var key = Key((LeaseParty)party, r.Id("lease id"));
            if (key <= previous)
            {
                throw new MalformedEnvelopeException("id lease table: keys not in ascending order");
            }
            previous = key;
            var holder = r.Take(IdLeaseCodec.HolderBytes, "lease holder").ToArray();
            string label;
            try
            {
                label = new UTF8Encoding(false, throwOnInvalidBytes: true).GetString(r.Bytes(IdLeaseCodec.MaxLabelBytes, "lease label"));
            }
            catch (DecoderFallbackException e)
            {
                throw new MalformedEnvelopeException("id lease table: a label is not UTF-8", e);
            }
            table.Entries.Add(key, new Entry(holder, label, r.I64("lease expiry"), r.I64("lease last request")));
        }
        return table;
    }
}
