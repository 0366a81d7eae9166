using System.Diagnostics;

namespace SieveQ.Bft.Hosting;

/// <summary>Where a host spends CPU, by stage; a cheap always-on profile (two timestamps and an add per item).</summary>
public enum Stage
{
    /// <summary>MAC check and decode of inbound frames.</summary>
    ReceiveDecode,
    /// <summary>ECDSA proof and request checks before the core.</summary>
    Verify,
    /// <summary>ReplicaCore.Step / Tick, application execution included.</summary>
    CoreStep,
    /// <summary>Encoding the core's outgoing messages.</summary>
    Encode,
    /// <summary>Sealing frames (HMAC) into the socket pipe.</summary>
    SendSeal,
    /// <summary>Socket flushes.</summary>
    SendFlush,
    /// <summary>Write-ahead log appends and fsyncs.</summary>
    Wal,
}

public static class StageTimings
{
    private static readonly long[] Ticks = new long[Enum.GetValues<Stage>().Length];
    private static readonly long[] Counts = new long[Ticks.Length];

    public static void Add(Stage stage, long startTimestamp, long items = 1)
    {
        Interlocked.Add(ref Ticks[(int)stage], Stopwatch.GetTimestamp() - startTimestamp);
        Interlocked.Add(ref Counts[(int)stage], items);
    }

    /// <summary>Milliseconds and item counts per stage since process start.</summary>
    public static IReadOnlyDictionary<string, StageTotal> Snapshot()
    {
        var d = new SortedDictionary<string, StageTotal>(StringComparer.Ordinal);
        foreach (var s in Enum.GetValues<Stage>())
        {
            d[s.ToString()] = new StageTotal(Volatile.Read(ref Ticks[(int)s]) * 1000.0 / Stopwatch.Frequency, Volatile.Read(ref Counts[(int)s]));
        }
        return d;
    }
}

public readonly record struct StageTotal(double Milliseconds, long Items);
