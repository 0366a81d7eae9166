namespace SieveQ.Sieve.Receiver;

/// <summary>Tunables of the post-SQ voter.</summary>
public sealed record PostSqOptions
{
    /// <summary>Algorithm 1's snThreshold: votes are kept for route numbers in [expected, expected + window).</summary>
    public long VoteWindow { get; init; } = 8192;

    /// <summary>Senders tracked at once (a faulty replica could otherwise invent senders to exhaust memory).</summary>
    public int MaxSenders { get; init; } = 65_536;

    /// <summary>After f+1 digest votes without a body, wait this long for the designated replica before fetching.</summary>
    public long FetchGraceMs { get; init; } = 50;

    /// <summary>
    /// A designated replica whose vote was missing from this many delivered slots in a row, and that sent nothing
    /// since, is not waited for: its bodies are fetched at once (a silent replica's body is not in flight). Any
    /// output from it makes it waited for again. Only latency depends on it, never what is delivered.
    /// </summary>
    public int SilentAfterMissedSlots { get; init; } = 3;

    /// <summary>Between fetch attempts (each to the next replica that voted for the digest).</summary>
    public long FetchRetryMs { get; init; } = 250;

    public int MaxFetchItems { get; init; } = 512;

    /// <summary>
    /// The senders the enrolment lists; votes naming any other are dropped before any state is kept (a faulty
    /// replica could otherwise make the voter track invented senders). Null accepts any (tests of the voter alone).
    /// </summary>
    public IReadOnlySet<int>? EnrolledSenders { get; init; }

    /// <summary>
    /// Senders outside <see cref="EnrolledSenders"/> (enrolled later, through the ordering) the voter remembers each
    /// replica naming while fewer than f+1 replicas did; a sender is voted on once f+1 replicas named it.
    /// </summary>
    public int MaxUnlistedSenders { get; init; } = 64;

    /// <summary>
    /// Bytes of bodies one replica may have waiting in undelivered slots. A faulty replica vouches for its own
    /// bodies' digests, so without this it could fill the window of every sender with 1 MiB bodies; beyond it a
    /// body is dropped (counted) and, once f+1 replicas vote for its digest, fetched from one of them.
    /// </summary>
    public long MaxBodyBytesPerReplica { get; init; } = 64L * 1024 * 1024;
}
