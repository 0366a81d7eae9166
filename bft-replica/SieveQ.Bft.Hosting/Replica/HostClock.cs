using System.Diagnostics;

namespace SieveQ.Bft.Hosting.Replica;

/// <summary>
/// Milliseconds that are monotonic inside the process (timers never jump) and close to Unix time
/// across processes, because leaders stamp batches with it and followers check the stamp against
/// their own reading within the configured skew.
/// </summary>
public sealed class HostClock
{
    private readonly long _originUnixMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
    private readonly long _originTicks = Stopwatch.GetTimestamp();

    public long NowMs => _originUnixMs + (long)Stopwatch.GetElapsedTime(_originTicks).TotalMilliseconds;
}
