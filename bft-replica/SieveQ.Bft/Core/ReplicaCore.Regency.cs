using SieveQ.Bft.Codec;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

// Regency (leader) change: STOP, STOPDATA, SYNC.
public sealed partial class ReplicaCore
{
    /// <summary>Far-fetched regency numbers are a flood, not a complaint.</summary>
    private const int MaxRegencyJump = 1_000;

    /// <summary>The regency each replica last asked for (ours included); one value per replica keeps this bounded.</summary>
    private readonly int[] _wanted;
    private readonly Dictionary<int, StopData> _stopData = [];
    private readonly Dictionary<int, long> _syncResentAt = [];
    private readonly Dictionary<int, long> _nudgedAt = [];
    private long _syncDeadline = long.MaxValue;
    private int _failedSyncs;
    private long _lastStopBroadcast;
    private long _lastStopDataSentAt;
    private StopData? _ownStopData;
    private Sync? _ownSync;

    /// <summary>The instance the installed regency's SYNC started at: nothing below it runs in this regency.</summary>
    private long _regencyFloor;

    /// <summary>The value the current regency's SYNC bound for the instance below its own, until we execute it.</summary>
    private (long Cid, Batch Value)? _boundPrior;

    /// <summary>Asks for the next regency; repeated complaints do not stack.</summary>
    private void Complain(string reason)
    {
        Counters.Add($"complaint.{reason}");
        var target = Regency + 1;
        if (_wanted[Self] >= target)
        {
            return;
        }
        _wanted[Self] = target;
        BroadcastStop();
        EvaluateStops();
    }

    private void BroadcastStop()
    {
        var timedOut = _pool.InArrivalOrder()
            .Where(p => _now - p.ArrivedAt >= Config.RequestTimeoutMs)
            .Take(64)
            .Select(p => p.Request)
            .ToList();
        Broadcast(new Stop(Self, _wanted[Self], timedOut));
        _lastStopBroadcast = _now;
    }

    private void OnStop(Stop s)
    {
        if (s.NewRegency == Regency && IsLeader && Mode == ReplicaMode.Normal && _ownSync is not null)
        {
            ResendSync(s.From);
            return;
        }
        if (s.NewRegency <= Regency)
        {
            Counters.Add("drop.stop.stale");
            return;
        }
        if (s.NewRegency > Regency + MaxRegencyJump)
        {
            Counters.Add("drop.stop.far-future");
            return;
        }
        if (s.NewRegency > _wanted[s.From])
        {
            _wanted[s.From] = s.NewRegency;
        }
        foreach (var r in s.TimedOut)
        {
            if (r.From >= Config.N && !_clients.IsExecuted(r.From, r.Sequence))
            {
                AdmitRequest(r, "stop-carried");
            }
        }
        EvaluateStops();
    }

    /// <summary>
    /// f+1 replicas asking for a regency above ours means a correct one does: join. 2f+1 means
    /// it can be installed. Using the (f+1)-th and (2f+1)-th highest wishes ignores up to f liars.
    /// </summary>
    private void EvaluateStops()
    {
        var wishes = (int[])_wanted.Clone();
        Array.Sort(wishes);
        Array.Reverse(wishes);
        var join = wishes[Config.F];
        if (join > Regency && join > _wanted[Self])
        {
            _wanted[Self] = join;
            BroadcastStop();
            wishes = (int[])_wanted.Clone();
            Array.Sort(wishes);
            Array.Reverse(wishes);
        }
        var install = wishes[Config.Quorum - 1];
        if (install > Regency)
        {
            InstallRegency(install);
        }
    }

    private void InstallRegency(int regency)
    {
        Regency = regency;
        _wanted[Self] = Math.Max(_wanted[Self], regency);
        Mode = ReplicaMode.RegencyChange;
        Emit(new Persist(new RegencyRecord(regency)));
        _instances.Clear();
        _rerunCid = 0;
        _ownSync = null;
        _boundPrior = null;
        _regencySince = _now;
        _syncDeadline = _now + (Config.SyncTimeoutMs << Math.Min(_failedSyncs, 5));
        _pool.RestartTimers(_now);
        Counters.Add("regency.installed");
        var certs = _certificates.ToArray();
        _ownStopData = new StopData(Self, regency, LastDecided, certs,
            _signer.Sign(SigningBytes.ForStopData(Self, regency, LastDecided, certs)));
        SendOwnStopData();
        foreach (var peer in _stopData.Where(kv => kv.Value.NewRegency < regency).Select(kv => kv.Key).ToList())
        {
            _stopData.Remove(peer);
        }
    }

    private void SendOwnStopData()
    {
        if (_ownStopData is null)
        {
            return;
        }
        _lastStopDataSentAt = _now;
        if (LeaderOf(_ownStopData.NewRegency) == Self)
        {
            _stopData[Self] = _ownStopData;
            TryBuildSync();
        }
        else
        {
            SendTo(LeaderOf(_ownStopData.NewRegency), _ownStopData);
        }
    }

    private void TickRegencyChange()
    {
        if (_now >= _syncDeadline)
        {
            _failedSyncs++;
            _syncDeadline = long.MaxValue;
            Complain("sync-timeout");
            return;
        }
        if (_now - _lastStopDataSentAt >= RetransmitIntervalMs)
        {
            SendOwnStopData();
        }
    }

    private void TickStopRebroadcast()
    {
        if (_wanted[Self] > Regency && _now - _lastStopBroadcast >= RetransmitIntervalMs)
        {
            BroadcastStop();
        }
    }

    private void OnStopData(StopData sd)
    {
        if (LeaderOf(sd.NewRegency) != Self)
        {
            Counters.Add("drop.stopdata.not-for-me");
            return;
        }
        if (sd.NewRegency < Regency)
        {
            Counters.Add("drop.stopdata.stale");
            return;
        }
        if (sd.NewRegency > Regency + MaxRegencyJump)
        {
            Counters.Add("drop.stopdata.far-future");
            return;
        }
        if (SyncChoice.Validate(sd, sd.NewRegency, Config, requireValues: true) is { } fault)
        {
            Counters.Add("drop.stopdata.bad-justification");
            Counters.Add($"stopdata.fault.{fault.Replace(' ', '-')}");
            return;
        }
        if (sd.NewRegency == Regency && Mode == ReplicaMode.Normal && _ownSync is not null)
        {
            ResendSync(sd.From);
            return;
        }
        if (!_stopData.TryGetValue(sd.From, out var prior) || prior.NewRegency <= sd.NewRegency)
        {
            _stopData[sd.From] = sd;
        }
        TryBuildSync();
    }

    /// <summary>The peer missed our SYNC; send it again, at most once per retransmission interval.</summary>
    private void ResendSync(int peer)
    {
        if (_ownSync is null || (_syncResentAt.TryGetValue(peer, out var at) && _now - at < RetransmitIntervalMs))
        {
            return;
        }
        _syncResentAt[peer] = _now;
        SendTo(peer, _ownSync);
        Counters.Add("sync.resent");
    }

    private void TryBuildSync()
    {
        if (Mode != ReplicaMode.RegencyChange || Leader != Self || _ownSync is not null)
        {
            return;
        }
        var evidence = _stopData.Values.Where(s => s.NewRegency == Regency).OrderBy(s => s.From).ToList();
        if (evidence.Count < Config.Quorum)
        {
            return;
        }
        var choice = SyncChoice.Choose(evidence, Config);
        Batch? value;
        Batch? prior = null;
        if (choice.BoundHash is { } bound)
        {
            value = CertifiedValue(evidence, choice.ConsensusId, bound);
            if (value is null)
            {
                Counters.Add("sync.bound-value-missing");
                return;
            }
            if (choice.PriorHash is { } priorHash)
            {
                prior = CertifiedValue(evidence, choice.ConsensusId - 1, priorHash);
                if (prior is null)
                {
                    Counters.Add("sync.bound-value-missing");
                    return;
                }
            }
        }
        else
        {
            value = new Batch(Math.Max(_now, LastDecidedTimestamp), NextBatchRequests());
        }
        var stripped = evidence.Select(s => s with
        {
            Certificates = s.Certificates.Select(c => c with { Value = null }).ToArray(),
        }).ToArray();
        var sync = new Sync(Self, Regency, stripped, choice.ConsensusId, value, prior);
        _ownSync = sync;
        Broadcast(sync);
        Counters.Add("sync.sent");
        AcceptSync(sync, choice);
    }

    private static Batch? CertifiedValue(IEnumerable<StopData> evidence, long cid, Digest hash) =>
        evidence.SelectMany(s => s.Certificates)
            .FirstOrDefault(c => c.ConsensusId == cid && c.BatchHash == hash && c.Value is not null)?.Value;

    private void OnSync(Sync s)
    {
        if (s.From != LeaderOf(s.Regency))
        {
            Counters.Add("drop.sync.not-leader");
            return;
        }
        if (s.Regency < Regency || (s.Regency == Regency && Mode == ReplicaMode.Normal))
        {
            Counters.Add("drop.sync.stale");
            return;
        }
        if (s.Regency > Regency + MaxRegencyJump)
        {
            Counters.Add("drop.sync.far-future");
            return;
        }
        var fault = JudgeSync(s, out var choice);
        if (fault is not null)
        {
            Counters.Add("drop.sync.bad-justification");
            Counters.Add($"sync.fault.{fault}");
            if (s.Regency == Regency)
            {
                Complain("bad-sync");
            }
            return;
        }
        if (s.Regency > Regency)
        {
            // The evidence shows 2f+1 replicas installed this regency; catch up to it.
            Regency = s.Regency;
            _wanted[Self] = Math.Max(_wanted[Self], Regency);
            Emit(new Persist(new RegencyRecord(Regency)));
        }
        AcceptSync(s, choice);
    }

    /// <summary>Re-derives the new leader's choice from its evidence; any mismatch is a bad justification.</summary>
    private string? JudgeSync(Sync s, out SyncDecision choice)
    {
        choice = default;
        if (s.Value is null)
        {
            return "no-value";
        }
        var senders = new HashSet<int>();
        foreach (var sd in s.Evidence)
        {
            if (sd.From < 0 || sd.From >= Config.N || !senders.Add(sd.From))
            {
                return "evidence-sender";
            }
            if (SyncChoice.Validate(sd, s.Regency, Config, requireValues: false) is not null)
            {
                return "evidence-invalid";
            }
        }
        if (senders.Count < Config.Quorum)
        {
            return "evidence-below-quorum";
        }
        choice = SyncChoice.Choose(s.Evidence, Config);
        if (choice.ConsensusId != s.ConsensusId)
        {
            return "wrong-instance";
        }
        if (choice.PriorHash is { } priorHash ? s.PriorValue?.Hash != priorHash : s.PriorValue is not null)
        {
            return "wrong-prior";
        }
        if (choice.BoundHash is { } bound)
        {
            return s.Value.Hash == bound ? null : "wrong-value";
        }
        if (s.ConsensusId == LastDecided + 1 && JudgeProposal(s.Value, resentSync: true) is { } f)
        {
            return $"fresh-value-{f}";
        }
        return null;
    }

    private void AcceptSync(Sync s, SyncDecision choice)
    {
        _ = choice;
        Mode = ReplicaMode.Normal;
        // Every instance below the SYNC's is decided; running one of them again in this regency could
        // decide another value for it (a fresh proposal for an instance whose decision we lost).
        _regencyFloor = s.ConsensusId;
        _boundPrior = s.PriorValue is { } pv ? (s.ConsensusId - 1, pv) : null;
        _failedSyncs = 0;
        _syncDeadline = long.MaxValue;
        _ownStopData = null;
        _instances.Clear();
        _rerunCid = 0;
        _lastHeardFromLeader = _now;
        _regencySince = _now;
        _lastLeaderBroadcast = _now;
        _pool.RestartTimers(_now);
        Counters.Add("regency.synced");
        NoteProgress(s.From, s.ConsensusId - 1);
        var x = s.ConsensusId;
        if (x < LastDecided)
        {
            Counters.Add("sync.instance-behind-us");
            return;
        }
        if (x == LastDecided)
        {
            _rerunCid = x;
        }
        CheckBoundPrior();
        var inst = Instance(x);
        inst.Proposal = s.Value;
        inst.ProposalPrechecked = true;
        ApplyBoundPrior();
        if (x > LastDecided + 1)
        {
            StartStateTransfer("sync-ahead");
            return;
        }
        Advance(inst);
    }

    /// <summary>
    /// The evidence bound the value of the instance below the SYNC's (see <see cref="SyncChoice"/>). Once we
    /// have decided everything before it, we execute it: the only value it can have been decided with.
    /// </summary>
    private void ApplyBoundPrior()
    {
        if (_boundPrior is not { } p || p.Cid != LastDecided + 1 || _rerunCid != 0)
        {
            return;
        }
        _boundPrior = null;
        Counters.Add("sync.prior-executed");
        Execute(p.Cid, p.Value);
    }

    /// <summary>A bound prior value we already decided must be the one we decided.</summary>
    private void CheckBoundPrior()
    {
        if (_boundPrior is { } p && p.Cid <= LastDecided)
        {
            if (_decidedLog.TryGetValue(p.Cid, out var mine) && mine.Hash != p.Value.Hash)
            {
                Counters.Add("safety.prior-mismatch");
            }
            _boundPrior = null;
        }
    }

    /// <summary>
    /// We see the leader of a regency we have not installed: we missed its SYNC. A STOP naming
    /// that regency makes the leader send SYNC again, and SYNC carries the proof we need to follow.
    /// (A STOPDATA would commit us to leave our regency on a possibly Byzantine peer's word.)
    /// </summary>
    private void NudgeLeaderOf(int regency)
    {
        if (regency <= Regency || regency > Regency + MaxRegencyJump || LeaderOf(regency) == Self)
        {
            return;
        }
        var leader = LeaderOf(regency);
        if (_nudgedAt.TryGetValue(leader, out var at) && _now - at < RetransmitIntervalMs)
        {
            return;
        }
        _nudgedAt[leader] = _now;
        SendTo(leader, new Stop(Self, regency, []));
        Counters.Add("regency.nudged");
    }
}
