namespace SieveQ.ReplicaSq;

/// <summary>
/// Whether the sieve delivers while messages wait in its reorder buffer: held messages with nothing processed for a
/// while is a stall that neither a dead process nor the ordering's own progress shows (every request is ordered and
/// answered; the replicas just hold each sender's later messages behind a gap that does not fill). Observed at each
/// Health call on this replica's own clock: it describes this process, it is not agreed state. A faulty sender's gap
/// in an otherwise idle deployment is reported too: its held messages are work that waits.
/// </summary>
internal sealed class HeldProgress(long stallAfterMs)
{
    /// <summary>Longer than a correct sender's retransmission takes to fill a gap, by a wide margin.</summary>
    public const long DefaultStallAfterMs = 30_000;

    private readonly Lock _gate = new();
    private long _processed = -1;
    private long _sinceMs;

    /// <summary>Why the sieve is not delivering, or null; <paramref name="processed"/> is the sieve's count of messages given to the rules.</summary>
    public string? Stall(long processed, long held, long nowMs)
    {
        lock (_gate)
        {
            if (held == 0 || processed != _processed)
            {
                _processed = processed;
                _sinceMs = nowMs;
                return null;
            }
            var age = nowMs - _sinceMs;
            return age >= stallAfterMs
                ? $"not delivering: {held} messages held behind a sender's gap and nothing processed for {age / 1000.0:0.0} s"
                : null;
        }
    }
}
