using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using System.Text;
using SieveQ.Sieve.Diagnostics;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Hosting.Diagnostics;

/// <summary>
/// Where a message's time goes on its way through the sieve: when <c>SIEVEQ_STAGE_TRACE</c> names a
/// folder, every process marks a sample of messages (sequence numbers divisible by
/// <c>SIEVEQ_STAGE_TRACE_EVERY</c>, default 64) at each stage it passes, with the monotonic clock, and
/// appends the marks to a file of its own there. On one machine that clock is shared by all processes
/// (CLOCK_MONOTONIC on Linux, QueryPerformanceCounter on Windows), so marks of different processes
/// subtract. Hosts call it; the deterministic sieve classes are handed <see cref="Marks"/> as an
/// <see cref="IStageMarks"/> instead, so they read neither the environment nor the clock.
/// Off (the default) a mark costs one static field read. Bounded: at most <see cref="MaxBuffered"/>
/// marks wait for the writer; more are counted and discarded.
/// </summary>
public static class StageTrace
{
    public const string FolderVariable = "SIEVEQ_STAGE_TRACE";
    public const string EveryVariable = "SIEVEQ_STAGE_TRACE_EVERY";
    private const int MaxBuffered = 1 << 20;

    private static readonly Sink? s_sink = Sink.FromEnvironment();

    public static bool Enabled => s_sink is not null;

    /// <summary>
    /// The sink configured from the environment, to hand to the sieve's classes (which take an
    /// <see cref="IStageMarks"/> rather than reading this static); records nothing when tracing is off.
    /// </summary>
    public static IStageMarks Marks { get; } = s_sink is null ? NoStageMarks.Instance : s_sink;

    /// <summary>Marks (sender, seq) at <paramref name="stage"/> now, when tracing is on and the number is sampled.</summary>
    public static void Mark(string stage, int sender, long seq) => s_sink?.Mark(stage, sender, seq);

    /// <summary>Marks every sampled sender message inside an ordering-request payload (decoded only when tracing is on).</summary>
    public static void MarkOrderingPayload(string stage, ReadOnlyMemory<byte> payload) => Marks.MarkOrderingPayload(stage, payload);

    /// <summary>Marks every sampled sender message of an ordering request already decoded.</summary>
    public static void MarkOrderingRequest(string stage, OrderingRequest request) => Marks.MarkOrderingRequest(stage, request);

    /// <summary>Writes what is buffered (also done every half second and at process exit).</summary>
    public static void Flush() => s_sink?.Flush();

    /// <summary>One line of a trace file: stage, sender, seq, timestamp (Stopwatch ticks) and the writing process's id.</summary>
    public readonly record struct TraceMark(string Stage, int Sender, long Seq, long Ticks, int Process);

    /// <summary>Reads every trace file of <paramref name="folder"/>; lines that do not parse are skipped.</summary>
    public static List<TraceMark> ReadFolder(string folder)
    {
        var marks = new List<TraceMark>();
        foreach (var file in Directory.EnumerateFiles(folder, "*.trace"))
        {
            if (!int.TryParse(Path.GetFileNameWithoutExtension(file), NumberStyles.None, CultureInfo.InvariantCulture, out var pid))
            {
                continue;
            }
            foreach (var line in File.ReadLines(file))
            {
                var f = line.Split('\t');
                if (f.Length == 4
                    && int.TryParse(f[1], NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var sender)
                    && long.TryParse(f[2], NumberStyles.None, CultureInfo.InvariantCulture, out var seq)
                    && long.TryParse(f[3], NumberStyles.None, CultureInfo.InvariantCulture, out var ticks))
                {
                    marks.Add(new TraceMark(f[0], sender, seq, ticks, pid));
                }
            }
        }
        return marks;
    }

    private sealed class Sink : IStageMarks
    {
        private readonly ConcurrentQueue<TraceMark> _marks = new();
        private readonly string _path;
        private readonly Lock _writing = new();
        private readonly Timer _timer;
        private int _buffered;

        private Sink(string folder, long every)
        {
            Every = every;
            Directory.CreateDirectory(folder);
            _path = Path.Combine(folder, $"{Environment.ProcessId.ToString(CultureInfo.InvariantCulture)}.trace");
            _timer = new Timer(_ => Flush(), null, 500, 500);
            AppDomain.CurrentDomain.ProcessExit += (_, _) => Flush();
        }

        public long Every { get; }

        public bool Enabled => true;

        public void Mark(string stage, int sender, long seq)
        {
            if (seq % Every == 0)
            {
                Add(stage, sender, seq, Stopwatch.GetTimestamp());
            }
        }

        public static Sink? FromEnvironment()
        {
            var folder = Environment.GetEnvironmentVariable(FolderVariable);
            if (string.IsNullOrWhiteSpace(folder))
            {
                return null;
            }
            var every = long.TryParse(Environment.GetEnvironmentVariable(EveryVariable), NumberStyles.None, CultureInfo.InvariantCulture, out var e) && e > 0 ? e : 64;
            return new Sink(folder, every);
        }

        public void Add(string stage, int sender, long seq, long ticks)
        {
            if (Interlocked.Increment(ref _buffered) > MaxBuffered)
            {
                Interlocked.Decrement(ref _buffered);
                return;
            }
            _marks.Enqueue(new TraceMark(stage, sender, seq, ticks, 0));
        }

        public void Flush()
        {
            lock (_writing)
            {
                if (_marks.IsEmpty)
                {
                    return;
                }
                var text = new StringBuilder();
                while (_marks.TryDequeue(out var m))
                {
                    Interlocked.Decrement(ref _buffered);
                    text.Append(m.Stage).Append('\t')
                        .Append(m.Sender.ToString(CultureInfo.InvariantCulture)).Append('\t')
                        .Append(m.Seq.ToString(CultureInfo.InvariantCulture)).Append('\t')
                        .Append(m.Ticks.ToString(CultureInfo.InvariantCulture)).Append('\n');
                }
                File.AppendAllText(_path, text.ToString());
            }
        }
    }
}
