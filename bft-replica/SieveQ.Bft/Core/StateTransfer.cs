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
        _attempt = new Attempt(now);
        return bodyFrom;
    }

    /// <summary>Gives up the attempt in flight once the time-out passed; true when it did.</summary>
    public bool Expire(long now)
    {
        if (_attempt is null || now - _attempt.StartedAt < _config.StateTransferTimeoutMs)
        {
            return false;
        }
        _attempt = null;
        return true;
    }

    /// <summary>When the attempt in flight times out, or never.</summary>
    public long NextWakeup() => _attempt is null ? long.MaxValue : _attempt.StartedAt + _config.StateTransferTimeoutMs;

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

    /// <summary>
    /// The replies carrying a checkpoint above <paramref name="lastDecided"/> whose (id, state hash) f+1 replies
    /// vouch for, as current or previous checkpoint, highest first. The snapshot's bytes are not checked here.
    /// </summary>
    public IEnumerable<StateReply> VouchedCheckpoints(long lastDecided)
    {
        var replies = Replies();
        foreach (var body in replies.Where(x => x.Snapshot is not null && x.CheckpointId > lastDecided).OrderByDescending(x => x.CheckpointId))
        {
            var votes = replies.Count(x => (x.CheckpointId == body.CheckpointId && x.StateHash == body.StateHash)
                || (x.PreviousCheckpointId == body.CheckpointId && body.CheckpointId > 0 && x.PreviousStateHash == body.StateHash));
            if (votes >= _config.Weak)
            {
                yield return body;
            }
        }
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

    private sealed class Attempt(long startedAt)
    {
        public long StartedAt { get; } = startedAt;
        public Dictionary<int, StateReply> Replies { get; } = [];
    }
}
