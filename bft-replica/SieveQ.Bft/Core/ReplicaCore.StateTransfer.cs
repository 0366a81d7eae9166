using SieveQ.Bft.Codec;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

// Checkpoints, evidence of being behind, and state transfer.
public sealed partial class ReplicaCore
{
    private readonly StateTransfer _stateTransfer;
    private byte[] _checkpointState = [];
    private long _previousCheckpointId;
    private Digest _previousCheckpointHash;

    /// <summary>
    /// The decided log reaches back to the checkpoint before the latest one. Replicas checkpoint at
    /// slightly different moments; with one interval of overlap a lagging peer can always find f+1
    /// replicas vouching for the same entries, whichever side of a checkpoint each of them is on.
    /// </summary>
    private long _logStart;

    private void NoteProgress(int peer, long decided) => _stateTransfer.NoteProgress(peer, decided);

    /// <summary>
    /// Starts a transfer on evidence a correct replica vouches for or, once nothing has been decided
    /// here for a transfer time-out, on the leader's heartbeat alone (see <see cref="StateTransfer.ReasonToStart"/>).
    /// </summary>
    private void CheckBehind()
    {
        var quiet = Mode == ReplicaMode.Normal && _now - _lastDecisionAt >= Config.StateTransferTimeoutMs;
        if (_stateTransfer.ReasonToStart(LastDecided, quiet, Leader) is { } reason)
        {
            StartStateTransfer(reason);
        }
    }

    private void StartStateTransfer(string reason)
    {
        if (_stateTransfer.InProgress)
        {
            return;
        }
        Counters.Add($"state-transfer.started.{reason}");
        var bodyFrom = _stateTransfer.Begin(_now);
        for (var peer = 0; peer < Config.N; peer++)
        {
            if (peer != Self)
            {
                SendTo(peer, new StateRequest(Self, LastDecided, WantBody: peer == bodyFrom));
            }
        }
    }

    private void TickStateTransfer()
    {
        if (!_stateTransfer.InProgress)
        {
            CheckBehind();
            return;
        }
        if (_stateTransfer.Expire(_now))
        {
            Counters.Add("state-transfer.timeout");
            ActivateCurrent();
            CheckBehind();
        }
    }

    private void OnStateRequest(StateRequest q)
    {
        if (!_stateTransfer.MayServe(q.From, _now))
        {
            Counters.Add("drop.state-request.rate-limited");
            return;
        }
        // Our checkpoint when the requester is behind it, and every decision we hold above what it has: a peer
        // more than one interval behind then finds f+1 voices for one checkpoint (ours, or the one before it,
        // whose hash we also report) and for the entries after it, whichever side of a checkpoint each is on.
        var withCheckpoint = q.LastExecuted < LastCheckpointId;
        var from = Math.Max(q.LastExecuted, _logStart);
        var snapshot = withCheckpoint && q.WantBody ? _checkpointState : null;
        // Bodies are bounded by bytes too, so the reply fits a frame whatever the batches weigh; the requester
        // applies what it got and asks again from there.
        var budget = (long)WireLimits.MaxFrameBytes - (snapshot?.Length ?? 0) - (1024 * 1024);
        var log = new List<LoggedDecision>();
        foreach (var e in _decidedLog.Values.Where(e => e.ConsensusId > from))
        {
            if (log.Count >= WireLimits.MaxLogEntries)
            {
                break;
            }
            if (q.WantBody)
            {
                budget -= e.Value.EncodedSize + 64;
                if (budget < 0 && log.Count > 0)
                {
                    break;
                }
            }
            log.Add(new LoggedDecision(e.ConsensusId, e.Hash, q.WantBody ? e.Value : null));
        }
        SendTo(q.From, new StateReply(Self, LastCheckpointId, LastCheckpointHash, snapshot, log, _previousCheckpointId, _previousCheckpointHash));
        Counters.Add(q.WantBody ? "state-served.body" : "state-served.hashes");
    }

    private void OnStateReply(StateReply r)
    {
        if (!_stateTransfer.Collect(r))
        {
            Counters.Add("drop.state-reply.unsolicited");
            return;
        }
        ApplyVouchedState();
    }

    /// <summary>
    /// Installs what f+1 replies agree on: a checkpoint whose bytes hash to the vouched state
    /// hash, then each following decision whose value hashes to a vouched (instance, hash).
    /// </summary>
    private void ApplyVouchedState()
    {
        var progressed = false;
        foreach (var body in _stateTransfer.VouchedCheckpoints(LastDecided))
        {
            if (Digest.Compute(body.Snapshot) != body.StateHash)
            {
                Counters.Add("drop.state-reply.snapshot-hash-mismatch");
                continue;
            }
            try
            {
                InstallState(body.CheckpointId, body.StateHash, body.Snapshot!);
                PersistCheckpoint();
                progressed = true;
                Counters.Add("state-transfer.checkpoint-installed");
                break;
            }
            catch (MalformedMessageException)
            {
                Counters.Add("drop.state-reply.undecodable-state");
            }
        }
        var vouchedLog = _stateTransfer.VouchedDecisions();
        while (vouchedLog.ValueFor(LastDecided + 1) is { } value)
        {
            Execute(LastDecided + 1, value);
            progressed = true;
        }
        if (!progressed)
        {
            return;
        }
        Counters.Add("state-transfer.progress");
        if (_stateTransfer.FinishIfCaughtUp(LastDecided))
        {
            Counters.Add("state-transfer.completed");
        }
        ActivateCurrent();
    }

    private void TakeCheckpoint()
    {
        var state = ReplicatedState.Encode(LastDecided, LastDecidedTimestamp, _clients, _app.TakeSnapshot());
        var hash = ReplicatedState.Hash(state);
        SetCheckpoint(LastDecided, hash, state, installed: false);
        PersistCheckpoint();
        Broadcast(new Checkpoint(Self, LastDecided, hash));
        Counters.Add("checkpoint.taken");
    }

    /// <param name="installed">True when the state came from elsewhere, so there is no log before it to keep.</param>
    private void SetCheckpoint(long cid, Digest hash, byte[] state, bool installed)
    {
        if (cid > LastCheckpointId)
        {
            _previousCheckpointId = LastCheckpointId;
            _previousCheckpointHash = LastCheckpointHash;
        }
        _logStart = installed ? cid : LastCheckpointId;
        LastCheckpointId = cid;
        LastCheckpointHash = hash;
        _checkpointState = state;
        foreach (var old in _decidedLog.Keys.Where(c => c <= _logStart).ToList())
        {
            _decidedLog.Remove(old);
        }
    }

    /// <summary>
    /// A checkpoint supersedes the decisions before it, but the log keeps the decisions since the previous one
    /// (the same overlap the decided log keeps in memory): after a whole-cluster restart, a lagging peer must
    /// still find f+1 replicas vouching for the same entries, and one that restarted from its checkpoint alone
    /// could vouch for nothing below it. The certificates are written again after the truncation.
    /// </summary>
    private void PersistCheckpoint()
    {
        Emit(new Persist(new CheckpointRecord(LastCheckpointId, LastCheckpointHash, _checkpointState)));
        Emit(new TruncateDurableLog(_logStart));
        foreach (var c in _certificates)
        {
            Emit(new Persist(new PreparedRecord(c)));
        }
        Emit(new Persist(new RegencyRecord(Regency)));
    }

    /// <summary>
    /// After recovery from a checkpoint, the decisions the log kept up to it (a contiguous run ending at it)
    /// are vouching material again: the decided log reaches back as it did before the restart.
    /// </summary>
    private void RestoreLogOverlap(IEnumerable<DecisionRecord> decisions)
    {
        var byCid = new Dictionary<long, DecisionRecord>();
        foreach (var d in decisions.Where(d => d.ConsensusId <= LastCheckpointId))
        {
            byCid[d.ConsensusId] = d;
        }
        var start = LastCheckpointId;
        while (start > 0 && byCid.TryGetValue(start, out var d))
        {
            _decidedLog[start] = new DecidedEntry(start, d.Value.Hash, d.Value, _now);
            start--;
        }
        _logStart = start;
    }

    private void InstallState(long cid, Digest hash, byte[] state)
    {
        var (last, ts, clients, app) = ReplicatedState.Decode(state, Config);
        if (last != cid)
        {
            throw new MalformedMessageException($"state claims instance {last}, checkpoint says {cid}");
        }
        _app.RestoreSnapshot(app);
        _clients = clients;
        LastDecided = cid;
        LastDecidedTimestamp = ts;
        _lastDecisionAt = _now;
        if (_rerunCid != 0 && _rerunCid <= cid)
        {
            _rerunCid = 0;
        }
        SetCheckpoint(cid, hash, state, installed: true);
        _pool.RemoveWhere(r => _clients.IsExecuted(r.From, r.Sequence));
    }

    private void OnCheckpoint(Checkpoint c)
    {
        NoteProgress(c.From, c.ConsensusId);
        if (c.ConsensusId == LastCheckpointId && c.StateHash != LastCheckpointHash)
        {
            Counters.Add("checkpoint.mismatch");
        }
        CheckBehind();
    }
}
