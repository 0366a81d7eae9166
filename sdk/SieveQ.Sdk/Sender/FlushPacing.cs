namespace SieveQ.Sdk.Sender;

/// <summary>
/// How long a sender may hold staged messages before it signs them (one flush is one Merkle signature,
/// which each of the 3f+1 replicas verifies).
/// <para>
/// The interval stretches with the share of the outstanding window in use. A window that is filling
/// means acknowledgements lag far behind sending, so the end-to-end latency is already long next to
/// the few added milliseconds, while every root signature saved spares 3f+1 verifications on machines
/// that are then busy. An idle or lightly loaded sender keeps the short interval, so batching costs it
/// almost no latency. The measurement behind this is in docs/design-figures.md.
/// </para>
/// </summary>
internal static class FlushPacing
{
    /// <summary>
    /// The interval in whole milliseconds: <paramref name="minMs"/> with an empty window, rising linearly
    /// to <paramref name="maxMs"/> with a full one.
    /// </summary>
    public static long IntervalMs(long minMs, long maxMs, int outstanding, int window)
    {
        if (maxMs <= minMs || window <= 0 || outstanding <= 0)
        {
            return minMs;
        }
        var used = Math.Min(outstanding, window);
        return minMs + (maxMs - minMs) * used / window;
    }
}
