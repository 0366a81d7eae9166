using SieveQ.Bft.Hosting.Bench;

namespace SieveQ.Cli.Bench;

/// <summary>Which configuration a phase of an A/B run measured.</summary>
internal enum PhaseArm
{
    Baseline,
    Treatment,
}

/// <summary>One measured phase: the messages sent in [From, To) (Stopwatch timestamps) under one configuration.</summary>
internal readonly record struct MeasuredPhase(int Index, PhaseArm Arm, string Label, long From, long To);

/// <summary>
/// Phases of one deployment's run, by when a message was sent: a message belongs to the phase whose
/// interval holds its send time. Time between phases (a switch going through the ordering and the
/// queues settling after it) belongs to none, so a message is never counted under the configuration it
/// did not run under. Latencies are kept per phase and per arm; recorded from the receiver's thread,
/// read after the run.
/// </summary>
internal sealed class MeasuredPhases
{
    /// <summary>Phases per run at most; each costs one recorder.</summary>
    public const int MaxPhases = 64;

    private readonly Lock _lock = new();
    private readonly List<MeasuredPhase> _phases = [];
    private readonly List<LatencyRecorder> _byPhase = [];
    private readonly LatencyRecorder[] _byArm = [new(), new()];

    public IReadOnlyList<MeasuredPhase> Phases
    {
        get
        {
            lock (_lock)
            {
                return [.. _phases];
            }
        }
    }

    /// <summary>Opens a phase at <paramref name="from"/>; the previous one must be closed.</summary>
    public void Open(PhaseArm arm, string label, long from)
    {
        lock (_lock)
        {
            if (_phases.Count >= MaxPhases)
            {
                throw new InvalidOperationException($"at most {MaxPhases} phases per run");
            }
            if (_phases.Count > 0 && (_phases[^1].To == long.MaxValue || from < _phases[^1].To))
            {
                throw new InvalidOperationException("phases must be closed and in order");
            }
            _phases.Add(new MeasuredPhase(_phases.Count, arm, label, from, long.MaxValue));
            _byPhase.Add(new LatencyRecorder());
        }
    }

    public void Close(long to)
    {
        lock (_lock)
        {
            if (_phases.Count == 0 || _phases[^1].To != long.MaxValue)
            {
                return;
            }
            _phases[^1] = _phases[^1] with { To = Math.Max(to, _phases[^1].From) };
        }
    }

    /// <summary>Counts a delivery under the phase it was sent in, if any.</summary>
    public void Record(long sentTimestamp, double latencyMicros)
    {
        LatencyRecorder? phase = null;
        var arm = PhaseArm.Baseline;
        lock (_lock)
        {
            for (var i = _phases.Count - 1; i >= 0; i--)
            {
                var p = _phases[i];
                if (sentTimestamp >= p.From)
                {
                    if (sentTimestamp < p.To)
                    {
                        phase = _byPhase[i];
                        arm = p.Arm;
                    }
                    break;
                }
            }
        }
        if (phase is not null)
        {
            phase.Record(latencyMicros);
            _byArm[(int)arm].Record(latencyMicros);
        }
    }

    public LatencySummary Phase(int index)
    {
        lock (_lock)
        {
            return _byPhase[index].Summarize();
        }
    }

    public LatencySummary Arm(PhaseArm arm) => _byArm[(int)arm].Summarize();

    /// <summary>Seconds of send time the arm's phases cover.</summary>
    public double ArmSeconds(PhaseArm arm, long frequency)
    {
        lock (_lock)
        {
            return _phases.Where(p => p.Arm == arm && p.To != long.MaxValue).Sum(p => (double)(p.To - p.From) / frequency);
        }
    }
}
