using System.Diagnostics;

namespace SieveQ.Transport;

/// <summary>
/// The monotonic clock every host's pumps and timers read. Stopwatch, not Environment.TickCount64:
/// on Linux that one is the coarse clock (4 ms steps), which stretched each 1-2 ms flush and batch
/// delay of the sender and pre-SQ to the next step.
/// </summary>
public static class MonotonicClock
{
    private static readonly long TicksPerMs = Stopwatch.Frequency / 1000;

    public static long Ms => Stopwatch.GetTimestamp() / TicksPerMs;

    public static long Us => (long)(Stopwatch.GetTimestamp() * (1_000_000.0 / Stopwatch.Frequency));
}
