using System.Diagnostics;
using SieveQ.Sdk.Receiver;

namespace SieveQ.Attacks;

/// <summary>One second of the run: legitimate deliveries in it, their latency percentiles, what the attacks did in it, and the watched components' RSS at its end (MiB, by process name), if any.</summary>
internal sealed record SecondFigures(int Second, long Delivered, double P50Ms, double P99Ms, long AttackActions, IReadOnlyDictionary<string, double>? RssMiB = null);

/// <summary>
/// What the receiver got, second by second from the start of the measured run (by delivery time), and whether each
/// legitimate sender's messages arrived exactly once, in order and unaltered. Deliveries from other senders (an
/// attacker's own messages within its grant) are only counted. Bounded: one slot per second of the run, latencies
/// of at most <see cref="MaxSamplesPerSecond"/> deliveries per second, the first <see cref="MaxViolationsKept"/> violations.
/// </summary>
internal sealed class DeliveryTimeline
{
    public const int MaxSamplesPerSecond = 50_000;
    public const int MaxViolationsKept = 20;

    private readonly Lock _lock = new();
    private readonly Dictionary<int, int> _next = [];
    private readonly List<long> _delivered = [];
    private readonly List<List<double>> _latencyMs = [];
    private readonly List<string> _violations = [];
    private readonly int _seconds;
    private long _start = long.MaxValue;
    private long _violationCount;
    private long _legitimate;
    private long _others;

    public DeliveryTimeline(IEnumerable<int> senders, int seconds)
    {
        foreach (var s in senders)
        {
            _next[s] = 0;
        }
        _seconds = seconds;
        for (var i = 0; i < seconds; i++)
        {
            _delivered.Add(0);
            _latencyMs.Add([]);
        }
    }

    public long Violations => Interlocked.Read(ref _violationCount);

    public long OtherSendersDelivered => Interlocked.Read(ref _others);

    public long LegitimateDelivered => Interlocked.Read(ref _legitimate);

    public IReadOnlyList<string> FirstViolations
    {
        get
        {
            lock (_lock)
            {
                return [.. _violations];
            }
        }
    }

    public void Start(long timestamp) => Interlocked.Exchange(ref _start, timestamp);

    /// <summary>How many of <paramref name="sender"/>'s messages arrived in order (the next index expected).</summary>
    public int NextIndex(int sender)
    {
        lock (_lock)
        {
            return _next[sender];
        }
    }

    public void Record(ReceivedMessage m)
    {
        var now = Stopwatch.GetTimestamp();
        lock (_lock)
        {
            if (!_next.TryGetValue(m.Sender, out var expected))
            {
                _others++;
                return;
            }
            if (LegitimatePayload.Read(m.Data.Span) is not { } p || p.Sender != m.Sender)
            {
                Violation($"sender {m.Sender} seq {m.SenderSeq}: payload altered or not its own");
                return;
            }
            if (p.Index != expected)
            {
                Violation($"sender {m.Sender}: index {p.Index} where {expected} was expected ({(p.Index < expected ? "duplicate or reordered" : "gap")})");
            }
            _next[m.Sender] = Math.Max(expected, p.Index + 1);
            _legitimate++;
            var second = (now - Volatile.Read(ref _start)) / Stopwatch.Frequency;
            if (now < _start || second >= _seconds)
            {
                return;
            }
            _delivered[(int)second]++;
            var samples = _latencyMs[(int)second];
            if (samples.Count < MaxSamplesPerSecond)
            {
                samples.Add((now - p.Stamp) * 1000.0 / Stopwatch.Frequency);
            }
        }
    }

    /// <summary>The figures of one complete second; <paramref name="attackActions"/> is the attack's count for it.</summary>
    public SecondFigures Second(int second, long attackActions)
    {
        lock (_lock)
        {
            var sorted = _latencyMs[second].ToArray();
            Array.Sort(sorted);
            return new SecondFigures(second, _delivered[second], Percentile(sorted, 0.50), Percentile(sorted, 0.99), attackActions);
        }
    }

    /// <summary>Deliveries per second and latency percentiles over seconds [from, to).</summary>
    public WindowFigures Window(int from, int to)
    {
        lock (_lock)
        {
            to = Math.Min(to, _seconds);
            if (to <= from)
            {
                return new WindowFigures(double.NaN, double.NaN, double.NaN);
            }
            var all = _latencyMs.Skip(from).Take(to - from).SelectMany(l => l).ToArray();
            Array.Sort(all);
            return new WindowFigures(_delivered.Skip(from).Take(to - from).Sum() / (double)(to - from), Percentile(all, 0.50), Percentile(all, 0.99));
        }
    }

    private void Violation(string what)
    {
        _violationCount++;
        if (_violations.Count < MaxViolationsKept)
        {
            _violations.Add(what);
        }
    }

    private static double Percentile(double[] sorted, double q) =>
        sorted.Length == 0 ? double.NaN : sorted[Math.Min(sorted.Length - 1, (int)(q * sorted.Length))];
}
