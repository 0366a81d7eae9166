using SieveQ.Bft.Codec;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Bft.Simulation.Application;
using SieveQ.Bft.Simulation.Byzantine;
using SieveQ.Bft.Simulation.Kernel;

namespace SieveQ.Bft.Simulation.Nodes;

/// <summary>
/// What the real replica host does around the core, in simulation: authenticate the link,
/// verify requests and signatures before the core sees a message (dropping and counting
/// failures), feed timer ticks, act on outputs in order, keep the disk, crash and recover.
/// A Byzantine replica runs the same host with its behaviours between the core and the wire.
/// </summary>
internal sealed class SimulatedReplicaHost
{
    private readonly ClusterSimulation _sim;
    private readonly IProofSigner _signer;
    private readonly long _clockOffset;
    private readonly long _tickPeriod;
    private long _armedFor = long.MaxValue;
    private long _nextPeriodicTick;
    private int _lastRegency;
    private long _lastDecided;
    private int? _tornAfter;
    private int _diskChecked;
    private int? _crashAboveRegency;
    private int _tornOnRegencyChange;

    public SimulatedReplicaHost(ClusterSimulation sim, int id, IProofSigner signer, ByzantineNode? byzantine)
    {
        _sim = sim;
        Id = id;
        _signer = signer;
        Byzantine = byzantine;
        _clockOffset = sim.Plan.ClockOffsets[id];
        _tickPeriod = sim.Plan.TickPeriods[id];
    }

    public int Id { get; }
    public ByzantineNode? Byzantine { get; }
    public bool IsCorrect => Byzantine is null;
    public ReplicaCore? Core { get; private set; }
    public LedgerApp? App { get; private set; }
    public SimulatedDisk Disk { get; } = new();
    public bool IsUp => Core is not null;
    public int Incarnation { get; private set; }
    public long LocalNow => _sim.Now + _clockOffset;

    /// <summary>Counters of the cores this replica ran before crashes, so a run's totals survive restarts.</summary>
    public CoreCounters PastCounters { get; } = new();

    public void Start()
    {
        Incarnation++;
        App = new LedgerApp(Id, _sim.Checker);
        var recovered = Disk.Count > 0 ? Disk.ReadAll() : null;
        if (!Guard("recovery", () => Core = new ReplicaCore(_sim.Plan.Config, Id, App, _signer, recovered, LocalNow)))
        {
            return;
        }
        _sim.Checker.OnRestart(Id, Core!.LastDecided);
        _nextPeriodicTick = _sim.Now + _tickPeriod;
        _armedFor = long.MaxValue;
        AfterStep();
    }

    /// <summary>Arms a crash that strikes inside the next step, after that many outputs were acted on.</summary>
    public void CrashDuringNextStep(int afterOutputs) => _tornAfter = afterOutputs;

    public bool CrashPending => _tornAfter is not null;

    /// <summary>Arms a crash that strikes inside the first step after which the core's regency went up.</summary>
    public void CrashAtNextRegencyChange(int afterOutputs)
    {
        _crashAboveRegency = Core?.Regency;
        _tornOnRegencyChange = afterOutputs;
    }

    public void DisarmRegencyCrash() => _crashAboveRegency = null;

    public void Crash()
    {
        _tornAfter = null;
        _crashAboveRegency = null;
        if (Core is not null)
        {
            foreach (var (name, v) in Core.Counters.Snapshot())
            {
                PastCounters.Add(name, v);
            }
        }
        Core = null;
        App = null;
        _armedFor = long.MaxValue;
        _sim.Stats.Count("disk.volatile-records-lost", Disk.LoseVolatile());
    }

    /// <summary>A planned stop, as the real host's graceful shutdown does it: a leader steps down, its STOP goes out, then the process ends.</summary>
    public void StepDownAndCrash()
    {
        if (Core is { } core && Guard("step down", () => core.StepDown(LocalNow)))
        {
            AfterStep();
        }
        Crash();
    }

    public void Receive(Delivery d)
    {
        if (Core is null)
        {
            _sim.Stats.Count("net.to-crashed-replica");
            return;
        }
        var m = d.Message;
        if (m is null)
        {
            try
            {
                m = MessageCodec.Decode(d.Frame);
            }
            catch (MalformedMessageException)
            {
                _sim.Stats.Count("host.malformed-frame");
                return;
            }
        }
        if (!Admit(d.From, m))
        {
            return;
        }
        if (Byzantine is not null)
        {
            m = Byzantine.Input(m);
            if (m is null)
            {
                return;
            }
        }
        var core = Core;
        if (Guard($"step on {m.Type} from {d.From}", () => core.Step(m, LocalNow)))
        {
            AfterStep();
        }
    }

    /// <summary>The checks a real host runs before the core: link identity, request authenticity, every signature.</summary>
    private bool Admit(int linkFrom, BftMessage m)
    {
        var n = _sim.Plan.Replicas;
        if (m.From != linkFrom)
        {
            _sim.Stats.Count("host.sender-not-link");
            return false;
        }
        if (linkFrom >= n && m is not ClientRequest)
        {
            _sim.Stats.Count("host.client-sent-protocol-message");
            return false;
        }
        if (m is ClientRequest && linkFrom < n)
        {
            _sim.Stats.Count("host.request-from-replica");
            return false;
        }
        if (!ProofCheck.VerifySignatures(m, _sim.ProofVerifier, n))
        {
            _sim.Stats.Count("host.bad-signature");
            return false;
        }
        foreach (var r in AuthenticatedRequestVerifier.RequestsIn(m))
        {
            if (!_sim.RequestVerifier.Verify(r))
            {
                _sim.Stats.Count(m is ClientRequest ? "host.bad-request" : "host.bad-nested-request");
                return false;
            }
        }
        return true;
    }

    public void Wake(ReplicaWake w)
    {
        if (Core is null || w.Incarnation != Incarnation || w.ArmedFor != _armedFor)
        {
            return;
        }
        _armedFor = long.MaxValue;
        if (_sim.Now >= _nextPeriodicTick)
        {
            _nextPeriodicTick = _sim.Now + _tickPeriod;
        }
        Disk.Sync();  // the host's lazy sync: decisions are durable by the next quiet moment
        var core = Core;
        if (Guard("tick", () => core.Tick(LocalNow)))
        {
            AfterStep();
        }
    }

    public void ByzantineTick()
    {
        if (Core is null || Byzantine is null)
        {
            return;
        }
        foreach (var o in Byzantine.Tick())
        {
            Transmit(o);
        }
    }

    private void AfterStep()
    {
        var core = Core!;
        if (_crashAboveRegency is { } armed && core.Regency > armed)
        {
            _crashAboveRegency = null;
            _tornAfter = _tornOnRegencyChange;
        }
        var acted = 0;
        foreach (var output in core.DrainOutputs())
        {
            if (_tornAfter is { } limit && acted++ >= limit)
            {
                _sim.Log($"replica {Id} crashes in the middle of a step, after {limit} outputs");
                Crash();
                return;
            }
            switch (output)
            {
                case SendTo s:
                    Send(s.To, s.Message);
                    break;
                case SendToReplicas s:
                    for (var r = 0; r < _sim.Plan.Replicas; r++)
                    {
                        if (r != Id)
                        {
                            Send(r, s.Message);
                        }
                    }
                    break;
                case Decided d:
                    _sim.OnDecided(Id, d);
                    break;
                case Persist p:
                    Disk.Append(p.Record);
                    break;
                case TruncateDurableLog t:
                    Disk.Truncate(t.UpToConsensusId);
                    break;
            }
        }
        _sim.Checker.AfterStep(Id, core);
        if (Disk.Count > _diskChecked)
        {
            _sim.Checker.CheckDisk(Id, Disk.LogRecords);
        }
        _diskChecked = Disk.Count;
        if (core.Regency != _lastRegency && _sim.IsLogging)
        {
            _sim.Log($"replica {Id} regency {_lastRegency} -> {core.Regency} (leader {core.Leader}, mode {core.Mode}, last decided {core.LastDecided})");
            _lastRegency = core.Regency;
        }
        if (core.LastDecided > _lastDecided + 1 && _sim.IsLogging)
        {
            _sim.Log($"replica {Id} jumped from instance {_lastDecided} to {core.LastDecided} (checkpoint from recovery or state transfer)");
        }
        _lastDecided = core.LastDecided;
        Rearm();
    }

    private void Send(int to, BftMessage m)
    {
        if (m is StateReply && to < _sim.Plan.Replicas)
        {
            _sim.Checker.OnStateServed(Id, to, LocalNow);
        }
        if (Byzantine is null)
        {
            _sim.Transmit(Id, to, m, null, 0);
            return;
        }
        foreach (var o in Byzantine.Output(new Outgoing(to, m, null)))
        {
            Transmit(o);
        }
    }

    private void Transmit(Outgoing o) => _sim.Transmit(Id, o.To, o.Message, o.Frame, o.ExtraDelay);

    /// <summary>One pending wake-up per replica: the earlier of what the core asks for and the periodic tick.</summary>
    private void Rearm()
    {
        var core = Core!;
        var wantLocal = core.NextWakeup;
        var want = wantLocal == long.MaxValue ? long.MaxValue : wantLocal - _clockOffset;
        want = Math.Max(_sim.Now, Math.Min(want, _nextPeriodicTick));
        if (want != _armedFor)
        {
            _armedFor = want;
            _sim.Schedule(want, new ReplicaWake(Id, want, Incarnation));
        }
    }

    /// <summary>A correct replica must survive any input: an exception from the core fails the run.</summary>
    private bool Guard(string what, Action action)
    {
        try
        {
            action();
            return true;
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            _sim.Checker.Fail("no crash on input", $"replica {Id}{(IsCorrect ? "" : " (byzantine)")} core threw during {what}: {e.GetType().Name}: {e.Message}");
            return false;
        }
    }
}
