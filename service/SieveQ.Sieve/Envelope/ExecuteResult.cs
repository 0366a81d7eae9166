namespace SieveQ.Sieve.Envelope;

/// <summary>A sender message the replicas refused without taking it (no room, ahead of a gap, over the grant): its sender will send it again.</summary>
public readonly record struct UntakenMessage(int Sender, long Seq);

/// <summary>
/// What the replicas agree to tell a pre-SQ about one of its ordering requests: how many items were
/// accepted (passed every check), held in the reorder buffer, or dropped, and which dropped messages were
/// refused untaken. The pre-SQ takes it once f+1 replicas return the same bytes, and forgets that it saw the
/// untaken ones, so the sender's retransmission of them is not refused there as a replay.
/// </summary>
public sealed record ExecuteResult(int Accepted, int Held, int Dropped)
{
    /// <summary>At most <see cref="ExecuteResultCodec.MaxUntaken"/>; the rest of a larger refusal is not listed (the sender then retransmits through another pre-SQ).</summary>
    public IReadOnlyList<UntakenMessage> Untaken { get; init; } = [];

    public bool Equals(ExecuteResult? other) =>
        other is not null && Accepted == other.Accepted && Held == other.Held && Dropped == other.Dropped && Untaken.SequenceEqual(other.Untaken);

    public override int GetHashCode() => HashCode.Combine(Accepted, Held, Dropped, Untaken.Count);
}

/// <summary>Layout: <c>u8 kind=0x11 | u32 accepted | u32 held | u32 dropped | u32 n | n x (u32 sender | u64 seq)</c>.</summary>
public static class ExecuteResultCodec
{
    /// <summary>Keeps a result well inside the ordering's reply bound whatever the batch.</summary>
    public const int MaxUntaken = 2048;

    public static byte[] Encode(ExecuteResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        var untaken = result.Untaken.Count > MaxUntaken ? result.Untaken.Take(MaxUntaken).ToList() : result.Untaken;
        using var w = new CanonicalWriter(17 + (untaken.Count * 12));
        w.U8((byte)StructureKind.ExecuteResult);
        w.Id(result.Accepted);
        w.Id(result.Held);
        w.Id(result.Dropped);
        w.Id(untaken.Count);
        foreach (var u in untaken)
        {
            w.Id(u.Sender);
            w.Seq(u.Seq);
        }
        return w.ToArray();
    }

    public static ExecuteResult Decode(ReadOnlySpan<byte> bytes)
    {
        var r = new CanonicalReader(bytes);
        r.Kind(StructureKind.ExecuteResult);
        var accepted = r.Id("accepted");
        var held = r.Id("held");
        var dropped = r.Id("dropped");
        var n = r.Count(MaxUntaken, "untaken");
        var untaken = new UntakenMessage[n];
        for (var i = 0; i < n; i++)
        {
            untaken[i] = new UntakenMessage(r.Id("untaken sender"), r.Seq("untaken seq"));
        }
        r.End("execute result");
        return new ExecuteResult(accepted, held, dropped) { Untaken = untaken };
    }
}
