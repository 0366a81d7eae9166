namespace SieveQ.Sdk.Sender;

/// <summary>How many latencies a window held and their median and 99th percentile, in microseconds.</summary>
public readonly record struct LatencyPercentiles(long Count, long P50Us, long P99Us);
