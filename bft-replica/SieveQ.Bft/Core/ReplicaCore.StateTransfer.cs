using SieveQ.Bft.Codec;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

// Checkpoints, evidence of being behind, and state transfer.
public sealed partial class ReplicaCore
{
    private readonly StateTransfer _stateTransfer;
    /// <summary>The latest checkpoint's bytes; replaced, never changed in place, so chunks served as views of it stay valid.</summary>
    private byte[] _checkpointState = [];
    /// <summary>The latest checkpoint's chunk list; null when it has more chunks than a manifest may list (then it is not served).</summary>
    private StateManifest? _checkpointManifest;
    private Digest _checkpointManifestRoot;
    private long _previousCheckpointId;
    private Digest _previousCheckpointHash;
    private Digest _previousManifestRoot;
    /// <summary>
    /// The checkpoint before the latest one, still served: a fetch takes many round trips, and its sources moving on
    /// to their next checkpoint meanwhile must not leave it without a source.
    /// </summary>
    private byte[] _previousCheckpointState = [];
    private StateManifest? _previousManifest;

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
            return;
        }
        if (_stateTransfer.Fetch is { } fetch && fetch.Expire(_now) is var late and > 0)
        {
            Counters.Add("state-transfer.chunk-retry.late", late);
            RequestChunks(fetch);
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
        // The checkpoint's bytes travel in chunks the requester asks for once f+1 replies agree on its manifest.
        var withCheckpoint = q.LastExecuted < LastCheckpointId;
        var from = Math.Max(q.LastExecuted, _logStart);
        var manifest = withCheckpoint ? _checkpointManifest : null;
        // Bodies are bounded by bytes too, so the reply fits a frame whatever the batches weigh; the requester
        // applies what it got and asks again from there.
        var budget = (long)WireLimits.MaxFrameBytes - ((long)(manifest?.ChunkCount ?? 0) * Digest.Size) - (1024 * 1024);
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
        SendTo(q.From, new StateReply(Self, LastCheckpointId, LastCheckpointHash, _checkpointManifestRoot, manifest, log,
            _previousCheckpointId, _previousCheckpointHash, _previousManifestRoot));
        Counters.Add(q.WantBody ? "state-served.body" : "state-served.hashes");
    }

    /// <summary>
    /// A chunk of our latest or previous checkpoint, as a view of the bytes we hold; a refusal for any other.
    /// Rate-limited per peer, refusals included, so a flood of chunk requests costs a bounded number of replies.
    /// </summary>
    private void OnStateChunkRequest(StateChunkRequest q)
    {
        if (!_stateTransfer.MayServeChunk(q.From, _now))
        {
            Counters.Add("drop.state-chunk-request.rate-limited");
            return;
        }
        var (state, manifest) = q.CheckpointId == LastCheckpointId ? (_checkpointState, _checkpointManifest)
            : q.CheckpointId == _previousCheckpointId && _previousCheckpointId > 0 ? (_previousCheckpointState, _previousManifest)
            : ([], null);
        if (manifest is not { } m || q.Index >= m.ChunkCount)
        {
            SendTo(q.From, new StateChunk(Self, q.CheckpointId, q.Index, Held: false, ReadOnlyMemory<byte>.Empty));
            Counters.Add("state-chunk.refused");
            return;
        }
        SendTo(q.From, new StateChunk(Self, q.CheckpointId, q.Index, Held: true, state.AsMemory((int)m.OffsetOf(q.Index), m.LengthOf(q.Index))));
        Counters.Add("state-chunk.served");
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

    private void OnStateChunk(StateChunk c)
    {
        var verdict = _stateTransfer.AcceptChunk(c, _now);
        switch (verdict)
        {
            case ChunkVerdict.Unsolicited:
                Counters.Add("drop.state-chunk.unsolicited");
                return;
            case ChunkVerdict.Refused:
                Counters.Add("state-transfer.chunk-retry.refused");
                break;
            case ChunkVerdict.Bad:
                Counters.Add("drop.state-chunk.bad");
                Counters.Add("state-transfer.chunk-retry.bad");
                break;
            default:
                Counters.Add("state-transfer.chunk-fetched");
                break;
        }
        var fetch = _stateTransfer.Fetch!;
        if (fetch.IsComplete)
        {
            ApplyVouchedState();
            return;
        }
        RequestChunks(fetch);
    }

    /// <summary>
    /// Asks for chunks up to the in-flight bound; gives the fetch up when no replica is left to ask or it repeated too
    /// often, and lets the vouched log take over (a given-up fetch is not started again in this attempt).
    /// </summary>
    private void RequestChunks(ChunkFetch fetch)
    {
        foreach (var (peer, index) in fetch.NextRequests(_now))
        {
            SendTo(peer, new StateChunkRequest(Self, fetch.CheckpointId, index));
        }
        if (fetch.HasFailed && fetch.Outstanding == 0)
        {
            Counters.Add("state-transfer.fetch-abandoned");
            _stateTransfer.EndFetch(gaveUp: true);
            ApplyVouchedState();
        }
    }

    /// <summary>
    /// Installs what f+1 replies agree on: a checkpoint assembled from chunks that each hash to the value the vouched
    /// manifest lists (and whose whole bytes hash to the vouched state hash), then each following decision whose
    /// value hashes to a vouched (instance, hash). Starts the chunk fetch once a checkpoint ahead of us is vouched.
    /// </summary>
    private void ApplyVouchedState()
    {
        var progressed = InstallFetchedCheckpoint();
        if (_stateTransfer.Fetch is { } stale && stale.CheckpointId <= LastDecided)
        {
            _stateTransfer.EndFetch(gaveUp: false);
        }
        if (_stateTransfer.StartFetch(LastDecided) is { } fetch)
        {
            Counters.Add("state-transfer.fetch-started");
            RequestChunks(fetch);
        }
        // A vouched checkpoint ahead of us is installed first, as when it came whole in one reply; the log waits
        // for it, and takes over if the fetch is given up.
        if (_stateTransfer.Fetch is null)
        {
            var vouchedLog = _stateTransfer.VouchedDecisions();
            while (vouchedLog.ValueFor(LastDecided + 1) is { } value)
            {
                Execute(LastDecided + 1, value);
                progressed = true;
            }
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

    private bool InstallFetchedCheckpoint()
    {
        if (_stateTransfer.Fetch is not { State: { } state } fetch)
        {
            return false;
        }
        _stateTransfer.EndFetch(gaveUp: false);
        if (fetch.CheckpointId <= LastDecided)
        {
            return false;
        }
        if (Digest.Compute(state) != fetch.StateHash)
        {
            Counters.Add("drop.state-chunk.state-hash-mismatch");
            _stateTransfer.EndFetch(gaveUp: true);
            return false;
        }
        try
        {
            InstallState(fetch.CheckpointId, fetch.StateHash, state);
            PersistCheckpoint();
            Counters.Add("state-transfer.checkpoint-installed");
            return true;
        }
        catch (MalformedMessageException)
        {
            Counters.Add("drop.state-chunk.undecodable-state");
            _stateTransfer.EndFetch(gaveUp: true);
            return false;
        }
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
            _previousManifestRoot = _checkpointManifestRoot;
            _previousCheckpointState = _checkpointState;
            _previousManifest = _checkpointManifest;
        }
        _logStart = installed ? cid : LastCheckpointId;
        LastCheckpointId = cid;
        LastCheckpointHash = hash;
        _checkpointState = state;
        _checkpointManifest = StateManifest.ChunksFor(state.Length, Config.StateChunkBytes) <= WireLimits.MaxStateChunks
            ? StateManifest.Of(state, Config.StateChunkBytes)
            : null;
        _checkpointManifestRoot = _checkpointManifest?.Root ?? default;
        if (_checkpointManifest is null)
        {
            Counters.Add("checkpoint.too-many-chunks-to-serve");
        }
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

    /// <summary>
    /// After a restart: the checkpoint before the latest, from our own log, vouched for and served again as before the
    /// crash. Without it a peer one interval behind found f+1 replicas agreeing on no checkpoint once one of them had
    /// restarted (the latest here, the previous one there), and stayed behind for good.
    /// </summary>
    private void RestorePreviousCheckpoint(CheckpointRecord previous)
    {
        _previousCheckpointId = previous.ConsensusId;
        _previousCheckpointHash = previous.StateHash;
        _previousCheckpointState = previous.State;
        _previousManifest = StateManifest.ChunksFor(previous.State.Length, Config.StateChunkBytes) <= WireLimits.MaxStateChunks
            ? StateManifest.Of(previous.State, Config.StateChunkBytes)
            : null;
        _previousManifestRoot = _previousManifest?.Root ?? default;
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
