namespace SieveQ.Sieve.PreSq;

/// <summary>Tunables of a pre-SQ's filter and batcher.</summary>
public sealed record PreSqOptions
{
    public int WindowSize { get; init; } = 8192;

    public long MaxAhead { get; init; } = 8192;

    /// <summary>
    /// A sender none of whose messages passed here for this long may jump past <see cref="MaxAhead"/>:
    /// the next number that also passes the MAC resets its window, as a first number would. A correct
    /// sender's numbers jump here when it was reassigned away and back, or retransmits through this
    /// pre-SQ what another one forwarded and the ordering then dropped; without this, such a sender
    /// could never pass here again. The replicas' own window (check e) still refuses a real jump.
    /// </summary>
    public long ReadoptAfterMs { get; init; } = 1_000;

    /// <summary>Default grant per sender (messages/s and burst); adjustable per sender at run time.</summary>
    public long GrantRatePerSecond { get; init; } = 10_000;

    public long GrantBurst { get; init; } = 20_000;

    /// <summary>An ordering request closes at this many items ...</summary>
    public int BatchMaxItems { get; init; } = 1024;

    /// <summary>... or this many bytes ...</summary>
    public int BatchMaxBytes { get; init; } = 1 << 20;

    /// <summary>
    /// ... or when its first item has waited this long. The pre-SQ host closes a batch at once when none
    /// of its requests is being ordered (Nagle's rule), so this delay only applies under load, where it
    /// sets how many ordering requests per second the pre-SQ makes.
    /// </summary>
    public long BatchMaxDelayMs { get; init; } = 4;
}
