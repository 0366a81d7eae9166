using System.Diagnostics;

namespace SieveQ.Sdk.Internal;

/// <summary>The two clocks the sieve core needs from a host.</summary>
internal static class Clock
{
    /// <summary>Monotonic milliseconds for time-outs and retransmissions: never jumps with wall-clock changes.</summary>
    /// Stopwatch, not Environment.TickCount64: on Linux that one is the coarse clock (4 ms steps), which
    /// would stretch every sub-millisecond wait of the pumps to the next step.
    public static long MonotonicMs => Stopwatch.GetTimestamp() / TicksPerMs;

    private static readonly long TicksPerMs = Stopwatch.Frequency / 1000;

    /// <summary>Wall-clock milliseconds for what a replica-SQ checks against its own clock (subscription freshness).</summary>
    public static long WallMs => DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
}
