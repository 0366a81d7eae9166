using SieveQ.Transport;

namespace SieveQ.Sdk.Internal;

/// <summary>The two clocks the sieve core needs from a host.</summary>
internal static class Clock
{
    /// <summary>Monotonic milliseconds for time-outs and retransmissions: never jumps with wall-clock changes.</summary>
    public static long MonotonicMs => MonotonicClock.Ms;

    /// <summary>Wall-clock milliseconds for what a replica-SQ checks against its own clock (subscription freshness).</summary>
    public static long WallMs => DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
}
