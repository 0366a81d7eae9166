namespace SieveQ.Sieve.Envelope;

/// <summary>A sender message the replicas refused without taking it (no room, ahead of a gap, over the grant): its sender will send it again.</summary>
public readonly record struct UntakenMessage(int Sender, long Seq);

/// <summary>
/// A sender whose messages in the request the replicas dropped because it is quarantined, and for how much longer
/// (agreed milliseconds) it stays so if it sends nothing more: the pre-SQ refuses its frames at check (a) meanwhile,
/// so a flooding sender stops costing the ordering once f+1 replicas have quarantined it.
/// </summary>
public readonly record struct SenderQuarantineHold(int Sender, long HoldMs);

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

    /// <summary>Ascending by sender, one entry each, at most <see cref="ExecuteResultCodec.MaxQuarantineHolds"/>.</summary>
    public IReadOnlyList<SenderQuarantineHold> Quarantined { get; init; } = [];

    public bool Equals(ExecuteResult? other) =>
        other is not null && Accepted == other.Accepted && Held == other.Held && Dropped == other.Dropped && Untaken.SequenceEqual(other.Untaken)
        && Quarantined.SequenceEqual(other.Quarantined);

    public override int GetHashCode() => HashCode.Combine(Accepted, Held, Dropped, Untaken.Count);
}

/// <summary>
/// Layout: <c>u8 kind=0x11 | u32 accepted | u32 held | u32 dropped | u32 n | n x (u32 sender | u64 seq)</c>, then,
/// only when some sender in the request was quarantined, <c>u32 m | m x (u32 sender | u64 holdMs)</c> ascending by
/// sender (absent otherwise, so results of requests without one are the bytes they always were).
/// </summary>
public static class ExecuteResultCodec
{
    /// <summary>Keeps a result well inside the ordering's reply bound whatever the batch.</summary>
    public const int MaxUntaken = 2048;

    /// <summary>A request names at most this many quarantined senders; holds are capped at <see cref="MaxHoldMs"/>.</summary>
    public const int MaxQuarantineHolds = 256;

    public const long MaxHoldMs = 10 * 60 * 1000;

    public static byte[] Encode(ExecuteResult result)
    {
        ArgumentNullException.ThrowIfNull(result);
        var untaken = result.Untaken.Count > MaxUntaken ? result.Untaken.Take(MaxUntaken).ToList() : result.Untaken;
        var holds = result.Quarantined.Count > MaxQuarantineHolds ? result.Quarantined.Take(MaxQuarantineHolds).ToList() : result.Quarantined;
        using var w = new CanonicalWriter(21 + (untaken.Count * 12) + (holds.Count * 12));
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
        if (holds.Count > 0)
        {
            w.Id(holds.Count);
            foreach (var h in holds)
            {
                w.Id(h.Sender);
                w.Seq(Math.Clamp(h.HoldMs, 0, MaxHoldMs));
            }
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
        IReadOnlyList<SenderQuarantineHold> holds = [];
        if (r.Remaining > 0)
        {
            var m = r.Count(MaxQuarantineHolds, "quarantined senders");
            var list = new SenderQuarantineHold[m];
            for (var i = 0; i < m; i++)
            {
                var sender = r.Id("quarantined sender");
                var hold = r.Seq("quarantine hold");
                if ((i > 0 && sender <= list[i - 1].Sender) || hold > MaxHoldMs)
                {
                    throw new MalformedEnvelopeException("quarantined senders out of order, repeated or held too long");
                }
                list[i] = new SenderQuarantineHold(sender, hold);
            }
            if (m == 0)
            {
                throw new MalformedEnvelopeException("an empty quarantined-senders section (absent when empty)");
            }
            holds = list;
        }
        r.End("execute result");
        return new ExecuteResult(accepted, held, dropped) { Untaken = untaken, Quarantined = holds };
    }
}
