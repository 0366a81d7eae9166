namespace SieveQ.Sieve.Replica;

/// <summary>A sender's last move between pre-SQs: the one it left, when (agreed time), and whether for loss.</summary>
internal readonly record struct PreSqMove(int From, long AtMs, bool ForLoss)
{
    public static readonly PreSqMove None = new(-1, 0, false);

    public bool IsNone => From < 0;

    /// <summary>
    /// Within <paramref name="quietMs"/> of the move the sender may still be sending through the pre-SQ it left (it
    /// learns of the move from the next ACKRES): nothing it claims then is measured against the new one.
    /// </summary>
    public bool Quiet(long nowMs, long quietMs) => !IsNone && nowMs - AtMs < quietMs;

    /// <summary>The pre-SQ left for loss less than <paramref name="holdMs"/> ago, to keep the sender off for load; -1 if none.</summary>
    public int AvoidedAt(long nowMs, long holdMs) => ForLoss && nowMs - AtMs < holdMs ? From : -1;
}
