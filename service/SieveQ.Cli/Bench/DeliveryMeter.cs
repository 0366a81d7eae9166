using System.Buffers.Binary;
using System.Diagnostics;
using SieveQ.Bft.Hosting.Bench;
using SieveQ.Sieve.Hosting.Diagnostics;

namespace SieveQ.Cli.Bench;

/// <summary>
/// Counts deliveries and their latency. Every benchmark payload starts with the sender's
/// <see cref="Stopwatch"/> timestamp (sender and receiver run in the same process, so the clocks are
/// one); only deliveries inside the measured window count.
/// </summary>
internal sealed class DeliveryMeter
{
    public const int StampBytes = 8;
    private readonly LatencyRecorder _latency = new();
    private readonly Lock _lock = new();
    private readonly List<long> _perSecond = [];
    // A bounded reservoir of latencies (ms) for the CDF plot; the percentiles use every sample.
    private readonly double[] _reservoir = new double[100_000];
    private long _seen;
    private long _windowStart = long.MaxValue;
    private long _windowEnd = long.MaxValue;
    private long _delivered;
    private long _total;

    public long Total => Interlocked.Read(ref _total);

    /// <summary>When set, every delivery is also counted under the phase it was sent in, whatever the window.</summary>
    public MeasuredPhases? Phases { get; init; }

    public static void Stamp(Span<byte> payload) => BinaryPrimitives.WriteInt64LittleEndian(payload, Stopwatch.GetTimestamp());

    public void Open(long startTimestamp, TimeSpan length)
    {
        lock (_lock)
        {
            _windowStart = startTimestamp;
            _windowEnd = startTimestamp + (long)(length.TotalSeconds * Stopwatch.Frequency);
        }
    }

    public void Record(ReadOnlySpan<byte> payload)
    {
        Interlocked.Increment(ref _total);
        if (payload.Length < StampBytes)
        {
            return;
        }
        var now = Stopwatch.GetTimestamp();
        var sent = BinaryPrimitives.ReadInt64LittleEndian(payload);
        Phases?.Record(sent, (now - sent) * 1_000_000.0 / Stopwatch.Frequency);
        lock (_lock)
        {
            if (now < _windowStart || now >= _windowEnd)
            {
                return;
            }
            _delivered++;
            var second = (int)((now - _windowStart) / Stopwatch.Frequency);
            while (_perSecond.Count <= second)
            {
                _perSecond.Add(0);
            }
            _perSecond[second]++;
            var ms = (now - sent) * 1000.0 / Stopwatch.Frequency;
            var slot = _seen < _reservoir.Length ? _seen : Random.Shared.NextInt64(_seen + 1);
            if (slot < _reservoir.Length)
            {
                _reservoir[slot] = ms;
            }
            _seen++;
        }
        _latency.Record((now - sent) * 1_000_000.0 / Stopwatch.Frequency);
    }

    public E2eFigures Figures(string name, double seconds, long sent)
    {
        lock (_lock)
        {
            var samples = _reservoir.AsSpan(0, (int)Math.Min(_seen, _reservoir.Length)).ToArray();
            return new E2eFigures(name, sent, _delivered, seconds, _delivered / seconds, _latency.Summarize(), [.. _perSecond], samples);
        }
    }
}

/// <summary>One side of an end-to-end benchmark run.</summary>
internal sealed record E2eFigures(string Name, long Sent, long Delivered, double Seconds, double DeliveredPerSecond, LatencySummary Latency, IReadOnlyList<long> PerSecond, IReadOnlyList<double> LatencySamplesMs)
{
    /// <summary>Where the time went, stage by stage (only with --trace).</summary>
    public IReadOnlyList<StageFigure>? Profile { get; init; }

    /// <summary>Merkle roots the senders signed while the run was measured (SieveQ runs only): each costs every replica a verification.</summary>
    public long? SenderRootsSigned { get; init; }

    /// <summary>CPU used over the measured window by each kind of process, per delivered message; the last figure is the total.</summary>
    public IReadOnlyList<CpuFigure>? Cpu { get; init; }

    /// <summary>Every message offered in the run, warm-up included (runs with phases, which drain the deliveries at the end).</summary>
    public long? SentInAll { get; init; }

    /// <summary>Every message the receiver read in the run, warm-up included, after the drain (runs with phases).</summary>
    public long? ReceivedInAll { get; init; }

    /// <summary>Messages sent per root signature, when roots were counted.</summary>
    public double? MessagesPerRoot => SenderRootsSigned is > 0 and var r ? (double)Sent / r : null;
}
