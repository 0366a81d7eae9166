using SieveQ.Bft.Codec;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

// Regency (leader) change: STOP, STOPDATA, SYNC.
public sealed partial class ReplicaCore
{
    /// <summary>Far-fetched regency numbers are a flood, not a complaint.</summary>
    private const int MaxRegencyJump = 1_000;

    private readonly RegencyChange _regencyChange;

    /// <summary>Asks for the next regency; repeated complaints do not stack.</summary>
    private void Complain(string reason)
    {
        Counters.Add($"complaint.{reason}");
        if (!_regencyChange.RaiseOwnWish(Regency + 1))
        {
            return;
        }
        BroadcastStop();
        EvaluateStops();
    }

    /// <summary>The wish whose STOPs carried <see cref="_carriedForWish"/>: a request is carried once per wish.</summary>
    private int _carriedWish = -1;
    private readonly HashSet<RequestId> _carriedForWish = [];

    /// <summary>
    /// Broadcasts our wish with the requests that timed out here and that no STOP for this wish carried yet (within
    /// <see cref="ReplicaConfig.MaxStopCarriedBytes"/>), so that every correct replica and the next leader have them. A
    /// repeated STOP does not carry the same requests again: repeating them every interval to every peer is what
    /// swamped the links under a backlog; their clients retransmit them to every replica in any case.
    /// </summary>
    private void BroadcastStop()
    {
        var wish = _regencyChange.OwnWish;
        if (wish != _carriedWish || _carriedForWish.Count > Config.MaxPendingTotal)
        {
            _carriedWish = wish;
            _carriedForWish.Clear();
        }
        var timedOut = new List<ClientRequest>();
        long bytes = 0;
        foreach (var p in _pool.InArrivalOrder())
        {
            if (_now - p.ArrivedAt < Config.RequestTimeoutMs || _carriedForWish.Contains(p.Request.Id))
            {
                continue;
            }
            var size = (long)p.Request.Payload.Length + p.Request.Proof.Length;
            if (timedOut.Count == 64 || (timedOut.Count > 0 && bytes + size > Config.MaxStopCarriedBytes))
            {
                Counters.Add("stop.carried-cut");
                break;
            }
            timedOut.Add(p.Request);
            bytes += size;
        }
        foreach (var r in timedOut)
        {
            // Bounded: cleared with every new wish, and above the pending pool's bound (carrying some again).
            _carriedForWish.Add(r.Id);
        }
        Broadcast(new Stop(Self, wish, timedOut));
        _regencyChange.NoteStopBroadcast(_now);
    }

    /// <summary>
    /// The leader's own input before a planned stop (a recovery, an upgrade): it asks for the next regency, and the
    /// others join at once on its word (<see cref="OnStop"/>), so the next leader takes over in one round of STOPs
    /// instead of after the leader-silence and request time-outs. Joining a regency change is what any time-out does,
    /// so acting on it early touches no safety fact (docs/bft-protocol.md); a Byzantine leader could only depose itself.
    /// True when this replica led a regency in normal operation and asked.
    /// </summary>
    public bool StepDown(long now)
    {
        _now = Math.Max(_now, now);
        if (!IsLeader || Mode != ReplicaMode.Normal)
        {
            return false;
        }
        Complain("stepping-down");
        return true;
    }

    private void OnStop(Stop s)
    {
        if (s.NewRegency == Regency && IsLeader && Mode == ReplicaMode.Normal && _regencyChange.OwnSync is not null)
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
        _regencyChange.RecordWish(s.From, s.NewRegency);
        foreach (var r in s.TimedOut)
        {
            if (r.From >= Config.N && !_clients.IsExecuted(r.From, r.Sequence))
            {
                AdmitRequest(r, "stop-carried");
            }
        }
        if (s.From == Leader && s.NewRegency == Regency + 1 && Mode == ReplicaMode.Normal)
        {
            // The leader itself asks to be replaced (StepDown, or its own time-out): no need to wait for f+1 wishes.
            Complain("leader-stepped-down");
        }
        EvaluateStops();
    }

    /// <summary>f+1 replicas asking for a regency above ours means a correct one does: join. 2f+1 means it can be installed.</summary>
    private void EvaluateStops()
    {
        if (_regencyChange.RegencyToJoin(Regency) is { } join)
        {
            _regencyChange.RaiseOwnWish(join);
            BroadcastStop();
        }
        if (_regencyChange.RegencyToInstall(Regency) is { } install)
        {
            InstallRegency(install);
        }
    }

    private void InstallRegency(int regency)
    {
        Regency = regency;
        Mode = ReplicaMode.RegencyChange;
        Emit(new Persist(new RegencyRecord(regency)));
        _instances.Clear();
        _rerunCid = 0;
        _regencySince = _now;
        _pool.RestartTimers(_now);
        Counters.Add("regency.installed");
        var certs = _certificates.ToArray();
        var ownStopData = new StopData(Self, regency, LastDecided, certs,
            _signer.Sign(SigningBytes.ForStopData(Self, regency, LastDecided, certs)));
        _regencyChange.Enter(regency, ownStopData, _now);
        SendOwnStopData();
    }

    private void SendOwnStopData()
    {
        if (_regencyChange.OwnStopData is not { } own)
        {
            return;
        }
        _regencyChange.NoteStopDataSent(_now);
        if (LeaderOf(own.NewRegency) == Self)
        {
            _regencyChange.CollectOwnStopData();
            TryBuildSync();
        }
        else
        {
            SendTo(LeaderOf(own.NewRegency), own);
        }
    }

    private void TickRegencyChange()
    {
        if (_regencyChange.SyncTimedOut(_now))
        {
            Complain("sync-timeout");
            return;
        }
        if (_regencyChange.StopDataResendDue(_now, RetransmitIntervalMs))
        {
            SendOwnStopData();
        }
    }

    private void TickStopRebroadcast()
    {
        if (_regencyChange.StopRebroadcastDue(Regency, _now, RetransmitIntervalMs))
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
        if (sd.NewRegency == Regency && Mode == ReplicaMode.Normal && _regencyChange.OwnSync is not null)
        {
            ResendSync(sd.From);
            return;
        }
        _regencyChange.CollectStopData(sd);
        TryBuildSync();
    }

    /// <summary>The peer missed our SYNC; send it again, at most once per retransmission interval.</summary>
    private void ResendSync(int peer)
    {
        if (_regencyChange.OwnSync is not { } own || !_regencyChange.MayResendSync(peer, _now, RetransmitIntervalMs))
        {
            return;
        }
        SendTo(peer, own);
        Counters.Add("sync.resent");
    }

    private void TryBuildSync()
    {
        if (Mode != ReplicaMode.RegencyChange || Leader != Self || _regencyChange.OwnSync is not null)
        {
            return;
        }
        if (_regencyChange.PlanSync(Regency) is not { } plan)
        {
            return;
        }
        if (plan.BoundValueMissing)
        {
            Counters.Add("sync.bound-value-missing");
            return;
        }
        var value = plan.BoundValue ?? new Batch(Math.Max(_now, LastDecidedTimestamp), NextBatchRequests());
        var sync = new Sync(Self, Regency, plan.EvidenceWithoutValues(), plan.Choice.ConsensusId, value, plan.BoundPriorValue);
        _regencyChange.SyncBuilt(sync);
        Broadcast(sync);
        Counters.Add("sync.sent");
        AcceptSync(sync, plan.Choice);
    }

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
            _regencyChange.RaiseOwnWish(Regency);
            Emit(new Persist(new RegencyRecord(Regency)));
        }
        AcceptSync(s, choice);
    }

    /// <summary>The new leader's choice re-derived from its evidence (<see cref="SyncChoice.Judge"/>), and a fresh value judged as a proposal.</summary>
    private string? JudgeSync(Sync s, out SyncDecision choice)
    {
        if (SyncChoice.Judge(s, Config, out choice) is { } fault)
        {
            return fault;
        }
        if (choice.BoundHash is null && s.ConsensusId == LastDecided + 1 && JudgeProposal(s.Value!, resentSync: true) is { } f)
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
        _regencyChange.Synced(s);
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
        if (_regencyChange.BoundPrior is not { } p || p.Cid != LastDecided + 1 || _rerunCid != 0)
        {
            return;
        }
        _regencyChange.ForgetBoundPrior();
        Counters.Add("sync.prior-executed");
        Execute(p.Cid, p.Value);
    }

    /// <summary>A bound prior value we already decided must be the one we decided.</summary>
    private void CheckBoundPrior()
    {
        if (_regencyChange.BoundPrior is { } p && p.Cid <= LastDecided)
        {
            if (_decidedLog.TryGetValue(p.Cid, out var mine) && mine.Hash != p.Value.Hash)
            {
                Counters.Add("safety.prior-mismatch");
            }
            _regencyChange.ForgetBoundPrior();
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
        if (!_regencyChange.MayNudge(leader, _now, RetransmitIntervalMs))
        {
            return;
        }
        SendTo(leader, new Stop(Self, regency, []));
        Counters.Add("regency.nudged");
    }
}
