namespace SieveQ.Core.Receiver;

/// <summary>Tunables of the post-SQ voter.</summary>
public sealed record PostSqOptions
{
    /// <summary>Algorithm 1's snThreshold: votes are kept for route numbers in [expected, expected + window).</summary>
    public long VoteWindow { get; init; } = 8192;

    /// <summary>Senders tracked at once (a faulty replica could otherwise invent senders to exhaust memory).</summary>
    public int MaxSenders { get; init; } = 65_536;

    /// <summary>After f+1 digest votes without a body, wait this long for the designated replica before fetching.</summary>
    public long FetchGraceMs { get; init; } = 50;

    /// <summary>Between fetch attempts (each to the next replica that voted for the digest).</summary>
    public long FetchRetryMs { get; init; } = 250;

    public int MaxFetchItems { get; init; } = 512;
}
