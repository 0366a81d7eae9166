namespace SieveQ.Sieve.Replica;

/// <summary>A sender's claim, in an ACKREQ, to have sent up to <see cref="LastSent"/> by agreed time <see cref="AtMs"/> (0: none).</summary>
internal readonly record struct LossClaim(long LastSent, long AtMs)
{
    public bool IsNone => LastSent == 0;
}
