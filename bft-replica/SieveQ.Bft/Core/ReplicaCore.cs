using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

/// <summary>
/// The BFT ordering protocol as a pure, single-threaded, deterministic state machine in the style
/// of etcd's raft: messages and clock readings go in through <see cref="Step"/> and <see cref="Tick"/>,
/// messages to send, records to persist and decisions come out of <see cref="DrainOutputs"/>.
/// No clock, thread, socket or randomness lives in here; the host verifies signatures before
/// messages arrive and signs through <see cref="IProofSigner"/>.
/// The protocol follows BFT-SMaRt's Mod-SMaRt: PROPOSE, WRITE (signed), ACCEPT, decide on 2f+1
/// ACCEPTs; regency change by STOP / STOPDATA / SYNC with PBFT's certificate rule; checkpoints
/// every K decisions; state transfer vouched by f+1 replicas.
/// </summary>
public sealed partial class ReplicaCore
{
    private readonly IReplicatedApplication _app;
    private readonly IProofSigner _signer;
    private readonly List<CoreOutput> _out = [];
    private readonly RequestPool _pool;
    private readonly Dictionary<long, InstanceState> _instances = [];
    private readonly SortedDictionary<long, DecidedEntry> _decidedLog = [];
    private readonly List<PreparedCertificate> _certificates = [];
    private ClientTable _clients;
    private bool _replaying;
    private bool _complainOnFirstTick;
    private long _now;

    public ReplicaCore(ReplicaConfig config, int self, IReplicatedApplication app, IProofSigner signer, IEnumerable<DurableRecord>? recovered = null, long now = 0)
    {
        ArgumentNullException.ThrowIfNull(config);
        config.Validate();
        if (self < 0 || self >= config.N)
        {
            throw new ArgumentOutOfRangeException(nameof(self), $"replica id must be in 0..{config.N - 1}");
        }
        Config = config;
        Self = self;
        _app = app;
        _signer = signer;
        _pool = new RequestPool(config.MaxPendingTotal);
        _clients = new ClientTable(config.RepliesRememberedPerClient);
        _regencyChange = new RegencyChange(config, self);
        _stateTransfer = new StateTransfer(config, self);
        _now = now;
        if (recovered is not null)
        {
            Recover(recovered);
        }
        _lastHeardFromLeader = now;
        _lastDecisionAt = now;
        _regencySince = now;
        _lastLeaderBroadcast = now;
    }

    public ReplicaConfig Config { get; }
    public int Self { get; }
    public int Regency { get; private set; }
    public int Leader => LeaderOf(Regency);
    public bool IsLeader => Leader == Self;
    public ReplicaMode Mode { get; private set; } = ReplicaMode.Normal;
    public long LastDecided { get; private set; }
    public long LastDecidedTimestamp { get; private set; }
    public bool IsTransferringState => _stateTransfer.InProgress;
    public int PendingRequests => _pool.Count;
    public CoreCounters Counters { get; } = new();
    public long LastCheckpointId { get; private set; }
    public Digest LastCheckpointHash { get; private set; }

    /// <summary>The instance being worked on: the next one, or a decided one a new regency re-runs.</summary>
    private long CurrentCid => _rerunCid != 0 ? _rerunCid : LastDecided + 1;

    private int LeaderOf(int regency) => regency % Config.N;

    public List<CoreOutput> DrainOutputs()
    {
        var list = new List<CoreOutput>(_out);
        _out.Clear();
        return list;
    }

    public void Step(BftMessage message, long now)
    {
        ArgumentNullException.ThrowIfNull(message);
        _now = Math.Max(_now, now);
        var fromReplica = message.From >= 0 && message.From < Config.N;
        if (message.From == Self && message is not ClientRequest)
        {
            Counters.Add("drop.from-self");
            return;
        }
        switch (message)
        {
            case ClientRequest r when !fromReplica:
                OnClientRequest(r);
                break;
            case Forward f when fromReplica:
                OnForward(f);
                break;
            case Propose p when fromReplica:
                OnPropose(p);
                break;
            case Write w when fromReplica:
                OnWrite(w);
                break;
            case Accept a when fromReplica:
                OnAccept(a);
                break;
            case Heartbeat h when fromReplica:
                OnHeartbeat(h);
                break;
            case Stop s when fromReplica:
                OnStop(s);
                break;
            case StopData sd when fromReplica:
                OnStopData(sd);
                break;
            case Sync s when fromReplica:
                OnSync(s);
                break;
            case Checkpoint c when fromReplica:
                OnCheckpoint(c);
                break;
            case StateRequest q when fromReplica:
                OnStateRequest(q);
                break;
            case StateReply r when fromReplica:
                OnStateReply(r);
                break;
            case StateChunkRequest q when fromReplica:
                OnStateChunkRequest(q);
                break;
            case StateChunk c when fromReplica:
                OnStateChunk(c);
                break;
            default:
                Counters.Add($"drop.wrong-sender.{message.Type}");
                return;
        }
        TryPropose();
    }

    public void Tick(long now)
    {
        _now = Math.Max(_now, now);
        if (_complainOnFirstTick)
        {
            // We may not WRITE in the regency we recovered into. If more than f replicas restarted (a whole
            // cluster after a power loss or an upgrade), fewer than 2f+1 can WRITE in it and it cannot order
            // anything: asking for the next one at once gives f+1 wishes and a new regency in one round, instead
            // of waiting for two request time-outs. A lone restarted replica's wish alone moves nothing.
            _complainOnFirstTick = false;
            Complain("restarted");
        }
        if (Mode == ReplicaMode.Normal)
        {
            TickNormal();
        }
        else
        {
            TickRegencyChange();
        }
        TickStopRebroadcast();
        TickStateTransfer();
        TryPropose();
    }

    /// <summary>The earliest time at which <see cref="Tick"/> has something to do.</summary>
    public long NextWakeup
    {
        get
        {
            var t = long.MaxValue;
            var retransmit = RetransmitIntervalMs;
            if (Mode == ReplicaMode.Normal)
            {
                if (IsLeader)
                {
                    t = Math.Min(t, _lastLeaderBroadcast + Config.HeartbeatIntervalMs);
                }
                else
                {
                    t = Math.Min(t, _lastHeardFromLeader + Config.LeaderSilenceTimeoutMs);
                    // Once we have complained, the request deadlines have done their work (the STOP is
                    // re-sent on its own timer); waking for a deadline already past spun the tick every
                    // millisecond for as long as the other replicas did not join the complaint.
                    if (_pool.Oldest is { } oldest && _regencyChange.OwnWish <= Regency)
                    {
                        t = Math.Min(t, oldest.ArrivedAt + (oldest.Forwarded ? 2 : 1) * Config.RequestTimeoutMs);
                        if (Config.MaxDecisionIntervalMs > 0)
                        {
                            t = Math.Min(t, Math.Max(oldest.ArrivedAt, Math.Max(_lastDecisionAt, _regencySince)) + Config.MaxDecisionIntervalMs);
                        }
                    }
                }
                if (_instances.TryGetValue(CurrentCid, out var inst) && (inst.SentWrite || inst.Proposal is not null))
                {
                    t = Math.Min(t, inst.LastRetransmitAt + retransmit);
                }
            }
            else
            {
                t = Math.Min(t, _regencyChange.NextSyncWakeup(retransmit));
            }
            t = Math.Min(t, _regencyChange.NextStopWakeup(Regency, retransmit));
            t = Math.Min(t, _stateTransfer.NextWakeup());
            return t == long.MaxValue ? t : Math.Max(t, _now + 1);
        }
    }

    /// <summary>How long an undecided instance or an unanswered complaint waits before its messages are sent again.</summary>
    private long RetransmitIntervalMs => Config.HeartbeatIntervalMs * 2;

    private void Emit(CoreOutput output)
    {
        if (!_replaying)
        {
            _out.Add(output);
            _diskMarked |= output is Persist { Record.GatesLaterSends: true };
        }
    }

    private void Broadcast(BftMessage m)
    {
        Emit(new SendToReplicas(m));
        if (IsLeader)
        {
            _lastLeaderBroadcast = _now;
        }
    }

    private void SendTo(int to, BftMessage m) => Emit(new SendTo(to, m));

    private void Recover(IEnumerable<DurableRecord> records)
    {
        _replaying = true;
        try
        {
            var list = records.ToList();
            var checkpoints = list.OfType<CheckpointRecord>().OrderByDescending(c => c.ConsensusId).ToList();
            if (checkpoints.Count > 0)
            {
                var checkpoint = checkpoints[0];
                InstallState(checkpoint.ConsensusId, checkpoint.StateHash, checkpoint.State);
                if (checkpoints.Skip(1).FirstOrDefault(c => c.ConsensusId < checkpoint.ConsensusId) is { } previous)
                {
                    RestorePreviousCheckpoint(previous);
                }
                RestoreLogOverlap(list.OfType<DecisionRecord>());
            }
            foreach (var d in list.OfType<DecisionRecord>().OrderBy(d => d.ConsensusId))
            {
                if (d.ConsensusId == LastDecided + 1)
                {
                    Execute(d.ConsensusId, d.Value);
                }
            }
            foreach (var r in list.OfType<RegencyRecord>())
            {
                Regency = Math.Max(Regency, r.Regency);
            }
            foreach (var p in list.OfType<PreparedRecord>())
            {
                KeepCertificate(p.Certificate);
            }
            _regencyChange.RaiseOwnWish(Regency);
            if (list.Count > 0)
            {
                _diskMarked = true;
                _amnesiacRegency = Regency;
                _complainOnFirstTick = true;
            }
        }
        finally
        {
            _replaying = false;
        }
    }

    private sealed record DecidedEntry(long ConsensusId, Digest Hash, Batch Value, long DecidedAt);
}
