using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

/// <summary>
/// One replica's state transfer, as state and decisions only: how far each peer has shown it decided (the
/// (f+1)-th highest is vouched for by a correct replica), the attempt in flight with the replies collected
/// for it, which peer is asked for the body, and how often peers asking us are served. What f+1 replies
/// agree on is chosen here; installing it is the core's. No clock (times come in as arguments), no I/O.
/// </summary>
internal sealed class StateTransfer
{
    private readonly ReplicaConfig _config;
    private readonly int _self;

    /// <summary>Highest instance each peer has shown it decided; one value per replica keeps this bounded.</summary>
    private readonly long[] _peerProgress;
    private readonly Dictionary<int, long> _lastServedAt = [];
    private readonly Dictionary<int, (long WindowStart, int Served)> _chunksServed = [];
    private Attempt? _attempt;
    private int _attempts;

    public StateTransfer(ReplicaConfig config, int self)
    {
        _config = config;
        _self = self;
        _peerProgress = new long[config.N];
    }

    public bool InProgress => _attempt is not null;

    public void NoteProgress(int peer, long decided)
    {
        if (peer >= 0 && peer < _config.N && peer != _self && decided > _peerProgress[peer])
        {
            _peerProgress[peer] = decided;
        }
    }

    public long ProgressOf(int peer) => _peerProgress[peer];

    /// <summary>The highest instance f+1 peers have shown they decided: at least one correct replica did.</summary>
    public long VouchedProgress()
    {
        var values = _peerProgress.Where((_, i) => i != _self).OrderByDescending(v => v).ToArray();
        return values[_config.F];
    }

    /// <summary>
    /// Why we should fetch state, or null. Two instances behind what f+1 vouch for is proof enough at once. One
    /// behind, or only the leader ahead, counts once nothing was decided here for a while (<paramref name="quiet"/>):
    /// when the fleet is idle the leader's heartbeat is the only sign that we missed the last decision, and a
    /// transfer installs only what f+1 vouch for, so a lying leader costs one round of requests, never a wrong state.
    /// </summary>
    public string? ReasonToStart(long lastDecided, bool quiet, int leader)
    {
        if (_attempt is not null)
        {
            return null;
        }
        var vouched = VouchedProgress();
        if (vouched >= lastDecided + 2)
        {
            return "peers-ahead";
        }
        if (!quiet)
        {
            return null;
        }
        if (vouched == lastDecided + 1)
        {
            return "peers-ahead";
        }
        return _peerProgress[leader] > lastDecided ? "leader-ahead" : null;
    }

    /// <summary>Starts an attempt and names the peer asked for the body; it rotates across attempts so a lying or silent one is passed over.</summary>
    public int Begin(long now)
    {
        var bodyFrom = (_self + 1 + (_attempts % (_config.N - 1))) % _config.N;
        _attempts++;
        _attempt = new Attempt(now, bodyFrom);
        return bodyFrom;
    }

    /// <summary>
    /// Gives up the attempt in flight once the time-out passed since it started or a chunk last arrived (a large state
    /// takes many chunks; a fetch making progress is not cut off); true when it did.
    /// </summary>
    public bool Expire(long now)
    {
        if (_attempt is null || now - _attempt.LastProgressAt < _config.StateTransferTimeoutMs)
        {
            return false;
        }
        _attempt = null;
        return true;
    }

    /// <summary>When the attempt in flight times out or a chunk request is due again, or never.</summary>
    public long NextWakeup() => _attempt is null
        ? long.MaxValue
        : Math.Min(_attempt.LastProgressAt + _config.StateTransferTimeoutMs, _attempt.Fetch?.NextWakeup() ?? long.MaxValue);

    /// <summary>The checkpoint being fetched in chunks in this attempt, if any.</summary>
    public ChunkFetch? Fetch => _attempt?.Fetch;

    /// <summary>
    /// Starts fetching the highest checkpoint above <paramref name="lastDecided"/> whose (id, state hash, manifest root)
    /// f+1 replies vouch for, as their latest or their previous checkpoint, and for which a reply carries a manifest with
    /// that root. The sources are the replies naming it as their latest or previous (replicas hold the bytes of both),
    /// the body peer's turn first.
    /// Null when a fetch runs or gave up in this attempt, or nothing is vouched yet.
    /// </summary>
    public ChunkFetch? StartFetch(long lastDecided)
    {
        if (_attempt is null || _attempt.Fetch is not null || _attempt.FetchGaveUp)
        {
            return null;
        }
        var replies = Replies();
        var offers = replies
            .Where(x => x.Manifest is not null && x.CheckpointId > lastDecided && x.Manifest.ChunkBytes == _config.StateChunkBytes)
            .OrderByDescending(x => x.CheckpointId);
        foreach (var offer in offers)
        {
            var (cid, hash, root) = (offer.CheckpointId, offer.StateHash, offer.ManifestRoot);
            var votes = replies.Count(x => (x.CheckpointId == cid && x.StateHash == hash && x.ManifestRoot == root)
                || (x.PreviousCheckpointId == cid && x.PreviousStateHash == hash && x.PreviousManifestRoot == root));
            if (votes < _config.Weak || offer.Manifest!.Root != root)
            {
                continue;
            }
            var sources = replies.Where(x => (x.CheckpointId == cid && x.StateHash == hash && x.ManifestRoot == root)
                    || (x.PreviousCheckpointId == cid && x.PreviousStateHash == hash && x.PreviousManifestRoot == root))
                .Select(x => x.From)
                .OrderBy(p => (p - _attempt.BodyFrom + _config.N) % _config.N)
                .ToList();
            _attempt.Fetch = new ChunkFetch(_config, cid, hash, offer.Manifest, sources);
            return _attempt.Fetch;
        }
        return null;
    }

    /// <summary>Hands a chunk to the fetch in flight; a good one counts as progress for the attempt's time-out.</summary>
    public ChunkVerdict AcceptChunk(StateChunk chunk, long now)
    {
        if (_attempt?.Fetch is not { } fetch)
        {
            return ChunkVerdict.Unsolicited;
        }
        var verdict = fetch.Accept(chunk);
        if (verdict == ChunkVerdict.Good)
        {
            _attempt.LastProgressAt = now;
        }
        return verdict;
    }

    /// <summary>Ends the fetch in flight (installed, failed, or overtaken); a failed one is not started again in this attempt.</summary>
    public void EndFetch(bool gaveUp)
    {
        if (_attempt is not null)
        {
            _attempt.Fetch = null;
            _attempt.FetchGaveUp |= gaveUp;
        }
    }

    /// <summary>Keeps a peer's reply (its latest replaces an earlier one); false when no attempt asked for it.</summary>
    public bool Collect(StateReply reply)
    {
        if (_attempt is null)
        {
            return false;
        }
        _attempt.Replies[reply.From] = reply;
        return true;
    }

    /// <summary>The decisions f+1 of the replies collected so far vouch for.</summary>
    public VouchedLog VouchedDecisions() => new(Replies().Select(x => x.Log.ToDictionary(e => e.ConsensusId)).ToList(), _config.Weak);

    /// <summary>Ends the attempt once we reached what f+1 peers vouch for (the next one is ordered, not fetched); true when it did.</summary>
    public bool FinishIfCaughtUp(long lastDecided)
    {
        if (VouchedProgress() > lastDecided + 1)
        {
            return false;
        }
        _attempt = null;
        _attempts = 0;
        return true;
    }

    /// <summary>A peer asking for state is served at most once per interval. True when it is due now (and noted).</summary>
    public bool MayServe(int peer, long now)
    {
        if (_lastServedAt.TryGetValue(peer, out var at) && now - at < _config.StateServeIntervalMs)
        {
            return false;
        }
        _lastServedAt[peer] = now;
        return true;
    }

    private List<StateReply> Replies() => _attempt is null ? [] : [.. _attempt.Replies.Values];

    /// <summary>
    /// A peer's chunk requests are answered at most <see cref="ReplicaConfig.StateChunksServedPerInterval"/> times per
    /// <see cref="ReplicaConfig.StateServeIntervalMs"/> (refusals included). True when this one is (and noted).
    /// </summary>
    public bool MayServeChunk(int peer, long now)
    {
        if (!_chunksServed.TryGetValue(peer, out var window) || now - window.WindowStart >= _config.StateServeIntervalMs)
        {
            window = (now, 0);
        }
        if (window.Served >= _config.StateChunksServedPerInterval)
        {
            return false;
        }
        _chunksServed[peer] = (window.WindowStart, window.Served + 1);
        return true;
    }

    private sealed class Attempt(long startedAt, int bodyFrom)
    {
        public int BodyFrom { get; } = bodyFrom;
        public long LastProgressAt { get; set; } = startedAt;
        public Dictionary<int, StateReply> Replies { get; } = [];
        public ChunkFetch? Fetch { get; set; }
        public bool FetchGaveUp { get; set; }
    }
}
