using System.Diagnostics.Metrics;

namespace SieveQ.Bft.Hosting.Transport;

/// <summary>Why inbound or outbound traffic was dropped. Values index <see cref="TransportCounters"/>.</summary>
public enum DropReason
{
    MalformedFrame,
    BadMac,
    FromMismatch,
    UnexpectedType,
    BadSignature,
    BadRequest,
    SendQueueFull,
    NoRoute,
    HandshakeFailed,
}

/// <summary>
/// Process-wide transport counters: plain Interlocked fields on the hot path, exported through one Meter
/// ("SieveQ.Bft.Transport") as observable instruments so exporters pay the cost, not the links.
/// </summary>
public static class TransportCounters
{
    public const string MeterName = "SieveQ.Bft.Transport";
    private static readonly long[] Drops = new long[Enum.GetValues<DropReason>().Length];
    private static long _framesIn, _framesOut, _bytesIn, _bytesOut, _linksOpened;
    private static readonly Meter Meter = new(MeterName);

    static TransportCounters()
    {
        Meter.CreateObservableCounter("sieveq.bft.link.frames_in", () => Volatile.Read(ref _framesIn));
        Meter.CreateObservableCounter("sieveq.bft.link.frames_out", () => Volatile.Read(ref _framesOut));
        Meter.CreateObservableCounter("sieveq.bft.link.bytes_in", () => Volatile.Read(ref _bytesIn), "By");
        Meter.CreateObservableCounter("sieveq.bft.link.bytes_out", () => Volatile.Read(ref _bytesOut), "By");
        Meter.CreateObservableCounter("sieveq.bft.link.opened", () => Volatile.Read(ref _linksOpened));
        Meter.CreateObservableCounter("sieveq.bft.link.drops", () =>
            Enum.GetValues<DropReason>().Select(r => new Measurement<long>(Volatile.Read(ref Drops[(int)r]), new KeyValuePair<string, object?>("reason", r.ToString()))));
    }

    public static void Drop(DropReason reason) => Interlocked.Increment(ref Drops[(int)reason]);
    public static long Dropped(DropReason reason) => Volatile.Read(ref Drops[(int)reason]);
    public static void FrameIn(int bytes)
    {
        Interlocked.Increment(ref _framesIn);
        Interlocked.Add(ref _bytesIn, bytes);
    }
    public static void FramesOut(int frames, long bytes)
    {
        Interlocked.Add(ref _framesOut, frames);
        Interlocked.Add(ref _bytesOut, bytes);
    }
    public static void LinkOpened() => Interlocked.Increment(ref _linksOpened);

    public static IReadOnlyDictionary<string, long> Snapshot()
    {
        var d = new SortedDictionary<string, long>(StringComparer.Ordinal)
        {
            ["frames_in"] = Volatile.Read(ref _framesIn),
            ["frames_out"] = Volatile.Read(ref _framesOut),
            ["bytes_in"] = Volatile.Read(ref _bytesIn),
            ["bytes_out"] = Volatile.Read(ref _bytesOut),
            ["links_opened"] = Volatile.Read(ref _linksOpened),
        };
        foreach (var r in Enum.GetValues<DropReason>())
        {
            d[$"drop.{r}"] = Volatile.Read(ref Drops[(int)r]);
        }
        return d;
    }
}
