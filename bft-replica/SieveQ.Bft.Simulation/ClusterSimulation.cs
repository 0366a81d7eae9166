using SieveQ.Bft.Client;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Bft.Simulation.Byzantine;
using SieveQ.Bft.Simulation.Checking;
using SieveQ.Bft.Simulation.Crypto;
using SieveQ.Bft.Simulation.Faults;
using SieveQ.Bft.Simulation.Kernel;
using SieveQ.Bft.Simulation.Network;
using SieveQ.Bft.Simulation.Nodes;

namespace SieveQ.Bft.Simulation;

/// <summary>
/// One seeded run: a cluster of real cores, clients, a faulty network and a fault plan, driven
/// event by event on a virtual clock, with the invariants checked after every event.
/// </summary>
internal sealed class ClusterSimulation
{
    /// <summary>Time the run keeps going after the last client finished, so late messages and checkpoints settle.</summary>
    private const long SettleMs = 500;
    private const long ByzantineTickMs = 20;
    private const long StepBudget = 5_000_000;

    private readonly EventQueue _queue = new();
    private readonly SimNetwork _network;
    private readonly SimulatedReplicaHost[] _replicas;
    private readonly ClientNode[] _clients;
    private readonly SimulatedSignatures _signatures;
    private readonly TextWriter? _log;
    private long _lastCompletionAt;
    private bool _ending;
    private PowerLoss? _powerLossArmed;

    /// <param name="checkRequestProofs">False only in the test that shows what the check prevents: hosts then take any proof.</param>
    public ClusterSimulation(ulong seed, FaultProfile profile, int replicas, TextWriter? log, bool checkRequestProofs = true)
    {
        var root = new SimRandom(seed);
        Plan = FaultPlanner.Create(root.Fork(), profile, replicas, seed);
        var networkRng = root.Fork();
        TrafficRandom = root.Fork();
        var keyRng = root.Fork();
        var byzantineRng = root.Fork();
        _log = log;
        _network = new SimNetwork(Plan, networkRng, Stats);
        _signatures = new SimulatedSignatures(replicas, keyRng);
        ClientKeys = new SimulatedClientKeys(Enumerable.Range(0, Plan.Clients).Select(Plan.ClientId), keyRng);
        RequestVerifier = new AuthenticatedRequestVerifier(checkRequestProofs ? ClientKeys : AnyProof.Instance, replicas, AcceptAllRequestVerifier.Instance);
        Checker = new InvariantChecker(Plan.Config, Enumerable.Range(0, replicas).Select(r => !Plan.IsByzantine(r)).ToArray(), () => Now, Plan.ClockOffsets.Max());
        _replicas = new SimulatedReplicaHost[replicas];
        for (var r = 0; r < replicas; r++)
        {
            ByzantineNode? byz = null;
            if (Plan.Byzantine.FirstOrDefault(b => b.Replica == r) is { } assignment)
            {
                var id = r;
                var ctx = new ByzantineContext(assignment, Plan.Config, _signatures.Signer(r), byzantineRng.Fork(), Stats,
                    () => _replicas[id].Core, () => _replicas[id].LocalNow, () => Now);
                byz = new ByzantineNode(ctx);
            }
            _replicas[r] = new SimulatedReplicaHost(this, r, _signatures.Signer(r), byz);
        }
        _clients = Enumerable.Range(0, Plan.Clients).Select(i => new ClientNode(this, i, Plan.RequestsPerClient[i])).ToArray();
    }

    public FaultPlan Plan { get; }
    public SimStats Stats { get; } = new();
    public TraceHash Trace { get; } = new();
    public InvariantChecker Checker { get; }
    public SimRandom TrafficRandom { get; }
    public SimulatedClientKeys ClientKeys { get; }
    public AuthenticatedRequestVerifier RequestVerifier { get; }
    public IProofVerifier ProofVerifier => _signatures;
    public long Now { get; private set; }
    public long Steps { get; private set; }
    public IReadOnlyList<SimulatedReplicaHost> Replicas => _replicas;
    public IReadOnlyList<ClientNode> Clients => _clients;
    public string? LivenessFailure { get; private set; }

    public void Schedule(long time, SimEvent e) => _queue.Schedule(time, e);

    /// <summary>Callers on hot paths test this first so that quiet runs do not format trace lines.</summary>
    public bool IsLogging => _log is not null;

    public void Log(string line) => _log?.WriteLine($"{Now,7}ms  {line}");

    public void Transmit(int from, int to, BftMessage? message, byte[]? frame, long extraDelay)
    {
        Stats.Count("net.sent");
        Span<long> arrivals = stackalloc long[2];
        var n = _network.Route(from, to, Now, arrivals);
        for (var i = 0; i < n; i++)
        {
            _queue.Schedule(arrivals[i] + extraDelay, new Delivery(from, to, message, frame));
        }
    }

    public void OnDecided(int replica, Decided d)
    {
        Trace.Add(replica, d.ConsensusId, (long)d.Value.Hash.GetHashCode());
        if (IsLogging && !Checker.Decisions.ContainsKey(d.ConsensusId))
        {
            Log($"instance {d.ConsensusId} decided first by replica {replica}: {d.Value.Requests.Count} requests, ts {d.Value.Timestamp}, {d.Value.Hash}");
        }
        Checker.OnDecided(replica, d.ConsensusId, d.Value);
        if (_powerLossArmed is { } armed)
        {
            // Strikes as the very next event: the deciding replica's outputs are acted on, its unsynced decision is not yet on disk.
            _powerLossArmed = null;
            Schedule(Now, new PowerLossStrike(armed));
        }
    }

    public void OnClientCompleted(ClientNode client, CompletedRequest c)
    {
        Trace.Add(client.Id, c.Sequence, c.ConsensusId);
        _lastCompletionAt = Now;
    }

    public void Run()
    {
        foreach (var line in Plan.Describe())
        {
            Log(line);
        }
        foreach (var r in _replicas)
        {
            r.Start();
            if (r.Byzantine is { WantsTicks: true })
            {
                Schedule(ByzantineTickMs, new ByzantineTick(r.Id));
            }
        }
        foreach (var c in _clients)
        {
            c.ScheduleFirst();
        }
        foreach (var crash in Plan.Crashes)
        {
            Schedule(crash.CrashAt, new ReplicaCrash(crash.Replica, crash.TornAfterOutputs, crash.AtRegencyChange, crash.Planned));
            Schedule(crash.RestartAt, new ReplicaRestart(crash.Replica));
        }
        foreach (var loss in Plan.PowerLosses)
        {
            Schedule(loss.ArmedAt, new PowerLossStrike(loss) { Armed = loss.AtNextDecision });
        }
        Schedule(Plan.HealAt, new Heal());
        Schedule(Plan.LivenessDeadline, new EndOfRun());

        while (!Checker.Failed && _queue.TryNext(out var time, out var e))
        {
            Now = time;
            Steps++;
            if (Steps > StepBudget)
            {
                Checker.Fail("bounded run", $"more than {StepBudget} events; something is flooding the event queue");
                break;
            }
            if (e is EndOfRun)
            {
                if (!_ending)
                {
                    LivenessFailure = DescribeUnfinished();
                }
                break;
            }
            Dispatch(e);
            if (!_ending && Now >= Plan.HealAt && _clients.All(c => c.Finished))
            {
                _ending = true;
                Log($"all {Plan.TotalRequests} requests completed; settling for {SettleMs}ms");
                Schedule(Now + SettleMs, new EndOfRun());
            }
        }
        if (Checker.Failed)
        {
            Log($"FAILED: {Checker.Failure}");
        }
    }

    private void Dispatch(SimEvent e)
    {
        switch (e)
        {
            case Delivery d:
                Trace.Add(Now, d.To, d.From);
                if (d.To < Plan.Replicas)
                {
                    _replicas[d.To].Receive(d);
                }
                else if (d.Message is Reply reply)
                {
                    _clients[d.To - 1000].OnReply(reply);
                }
                break;
            case ReplicaWake w:
                _replicas[w.Replica].Wake(w);
                break;
            case ClientSubmit s:
                _clients[s.Client].OnSubmitDue();
                break;
            case ClientWake w:
                _clients[w.Client].OnWake(w);
                break;
            case ByzantineTick t:
                _replicas[t.Replica].ByzantineTick();
                Schedule(Now + ByzantineTickMs, new ByzantineTick(t.Replica));
                break;
            case ReplicaCrash c:
                if (_replicas[c.Replica].IsUp)
                {
                    Trace.Add(Now, -1, c.Replica);
                    if (c.Planned)
                    {
                        Log($"replica {c.Replica} stops as planned{(_replicas[c.Replica].Core?.IsLeader == true ? ", stepping down as leader first" : "")}");
                        _replicas[c.Replica].StepDownAndCrash();
                    }
                    else if (c.AtRegencyChange)
                    {
                        Log($"replica {c.Replica} will crash when it next installs a regency");
                        _replicas[c.Replica].CrashAtNextRegencyChange(c.TornAfterOutputs ?? 0);
                    }
                    else if (c.TornAfterOutputs is { } k)
                    {
                        Log($"replica {c.Replica} will crash inside its next step, after {k} outputs");
                        _replicas[c.Replica].CrashDuringNextStep(k);
                    }
                    else
                    {
                        Log($"replica {c.Replica} crashes");
                        _replicas[c.Replica].Crash();
                    }
                }
                break;
            case ReplicaRestart r:
                _replicas[r.Replica].DisarmRegencyCrash();
                if (_replicas[r.Replica].CrashPending)
                {
                    _replicas[r.Replica].Crash();
                }
                if (!_replicas[r.Replica].IsUp)
                {
                    Log($"replica {r.Replica} restarts from {_replicas[r.Replica].Disk.Count} durable records");
                    Trace.Add(Now, -2, r.Replica);
                    _replicas[r.Replica].Start();
                }
                break;
            case PowerLossStrike p when p.Armed:
                Log("power loss armed: it strikes right after the next decision");
                _powerLossArmed = p.Loss;
                break;
            case PowerLossStrike p:
                StrikePowerLoss(p.Loss);
                break;
            case Heal:
                Log("faults stop: network reliable, every crashed replica restarted");
                foreach (var r in _replicas)
                {
                    r.DisarmRegencyCrash();
                    if (r.CrashPending)
                    {
                        r.Crash();
                    }
                    if (!r.IsUp)
                    {
                        r.Start();
                    }
                }
                break;
        }
    }

    private void StrikePowerLoss(PowerLoss loss)
    {
        Stats.Count("power-loss.struck");
        Log("power loss: every correct replica goes down at once");
        foreach (var r in _replicas.Where(r => r.IsCorrect && r.IsUp))
        {
            Trace.Add(Now, -3, r.Id);
            if (loss.TornAfterOutputs.TryGetValue(r.Id, out var k))
            {
                r.CrashDuringNextStep(k);
            }
            else
            {
                r.Crash();
            }
            Schedule(Now + loss.RestartDelays[r.Id], new ReplicaRestart(r.Id));
        }
    }

    private string DescribeUnfinished()
    {
        var lines = _clients.Where(c => !c.Finished)
            .Select(c => $"client {c.Id}: {c.Completed}/{c.Total} completed, {c.Outstanding} outstanding, {c.Unsubmitted} never submitted")
            .ToList();
        var replicas = _replicas.Select(r => r.Core is { } core
            ? $"replica {r.Id}{(r.IsCorrect ? "" : " (byzantine)")}: regency {core.Regency} mode {core.Mode} last decided {core.LastDecided} pending {core.PendingRequests}{(core.IsTransferringState ? " transferring state" : "")}"
            : $"replica {r.Id}: down");
        return $"not every request completed by {Plan.LivenessDeadline}ms (last completion at {_lastCompletionAt}ms): {string.Join("; ", lines)} | {string.Join("; ", replicas)}";
    }

    public CoreCounters CorrectCoreCounters()
    {
        var total = new CoreCounters();
        foreach (var r in _replicas.Where(r => r.IsCorrect))
        {
            foreach (var (k, v) in r.PastCounters.Snapshot())
            {
                total.Add(k, v);
            }
            if (r.Core is { } core)
            {
                foreach (var (k, v) in core.Counters.Snapshot())
                {
                    total.Add(k, v);
                }
            }
        }
        return total;
    }

    private sealed class AnyProof : IClientProofVerifier
    {
        public static readonly AnyProof Instance = new();
        public bool Verify(int client, ReadOnlySpan<byte> data, ReadOnlySpan<byte> proof) => true;
    }
}
