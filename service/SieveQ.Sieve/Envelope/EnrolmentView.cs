using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Envelope;

/// <summary>A pre-SQ's question to the replicas: the senders and receivers enrolled or revoked through the ordering, from id <see cref="FromId"/> on, unless the table is still at <see cref="KnownVersion"/>.</summary>
public sealed record EnrolmentQuery(long KnownVersion, int FromId);

/// <summary>
/// One page of the agreed enrolment-change table: its version, entries with ids from the query's on (a null party is
/// a revoked id), and whether the page reaches the table's end. The asker takes it once f+1 replicas return the same
/// bytes (the ordering's reply rule), so it believes only what a correct replica applied.
/// </summary>
public sealed record EnrolmentView(long Version, bool Complete, IReadOnlyList<KeyValuePair<int, EnrolledParty?>> Entries);

/// <summary>
/// Query layout: <c>u8 kind=0x07 | u64 knownVersion | u32 fromId</c>, alone in its ordering request. View layout:
/// <c>u8 kind=0x14 | u64 version | u8 complete | u32 n | n x (u32 id | entry)</c>, the entry as in the snapshot's
/// enrolment table (<c>u8 state (0 revoked, 1 sender, 2 receiver) | u32 len | name | u32 len | signature SPKI | u32 len |
/// agreement SPKI</c>), at most <see cref="MaxEntries"/> per page; an unchanged table answers with no entries.
/// </summary>
public static class EnrolmentViewCodec
{
    /// <summary>Keeps a page a few kilobytes, well inside the ordering's reply bound.</summary>
    public const int MaxEntries = 16;

    public const int QueryLength = 1 + 8 + 4;

    public static byte[] EncodeQuery(long knownVersion, int fromId)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(knownVersion);
        ArgumentOutOfRangeException.ThrowIfNegative(fromId);
        using var w = new CanonicalWriter(QueryLength);
        w.U8((byte)StructureKind.EnrolmentQuery);
        w.Seq(knownVersion);
        w.Id(fromId);
        return w.ToArray();
    }

    public static EnrolmentQuery DecodeQuery(ReadOnlySpan<byte> bytes)
    {
        var r = new CanonicalReader(bytes);
        r.Kind(StructureKind.EnrolmentQuery);
        var version = r.Seq("known version");
        var from = r.Id("from id");
        r.End("enrolment query");
        return new EnrolmentQuery(version, from);
    }

    public static byte[] EncodeView(EnrolmentView view)
    {
        ArgumentNullException.ThrowIfNull(view);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(view.Entries.Count, MaxEntries);
        using var w = new CanonicalWriter(14 + (view.Entries.Count * 64));
        w.U8((byte)StructureKind.EnrolmentView);
        w.Seq(view.Version);
        w.Bool(view.Complete);
        w.Id(view.Entries.Count);
        foreach (var (id, e) in view.Entries)
        {
            w.Id(id);
            Replica.EnrolmentChangeTable.WriteEntry(w, e);
        }
        return w.ToArray();
    }

    public static EnrolmentView DecodeView(ReadOnlySpan<byte> bytes)
    {
        var r = new CanonicalReader(bytes);
        r.Kind(StructureKind.EnrolmentView);
        var version = r.Seq("version");
        var complete = r.Bool("complete");
        var n = r.Count(MaxEntries, "entries");
        var entries = new KeyValuePair<int, EnrolledParty?>[n];
        var previous = -1;
        for (var i = 0; i < n; i++)
        {
            var id = r.Id("id");
            if (id <= previous)
            {
                throw new MalformedEnvelopeException("enrolment view: ids not in ascending order");
            }
            previous = id;
            entries[i] = new(id, Replica.EnrolmentChangeTable.ReadEntry(ref r, id));
        }
        r.End("enrolment view");
        return new EnrolmentView(version, complete, entries);
    }
}
