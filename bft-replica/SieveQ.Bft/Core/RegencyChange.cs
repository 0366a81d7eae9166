using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

/// <summary>
/// One replica's state in Mod-SMaRt's regency change (STOP, STOPDATA, SYNC) and the decisions that rest on it
/// alone: the regency each replica asked for and what f+1 and 2f+1 of those wishes allow, the STOPDATA a new
/// leader collects and the SYNC it can build from them, the SYNC time-out and its back-off, the limits on
/// re-sending, and what the installed regency's SYNC fixed. The core owns the installed regency, sends and
/// receives; nothing here reads a clock (times come in as arguments) or does I/O, so it is tested on its own.
/// </summary>
internal sealed class RegencyChange
{
    private readonly ReplicaConfig _config;
    private readonly int _self;

    /// <summary>The regency each replica last asked for (ours included); one value per replica keeps this bounded.</summary>
    private readonly int[] _wished;
    private readonly Dictionary<int, StopData> _stopData = [];
    private readonly Dictionary<int, long> _syncResentAt = [];
    private readonly Dictionary<int, long> _nudgedAt = [];
    private long _syncDeadline = long.MaxValue;
    private int _failedSyncs;
    private long _lastStopBroadcast;
    private long _lastStopDataSentAt;

    public RegencyChange(ReplicaConfig config, int self)
    {
        _config = config;
        _self = self;
        _wished = new int[config.N];
    }

    /// <summary>The regency this replica asks for; above the installed one while it complains.</summary>
    public int OwnWish => _wished[_self];

    /// <summary>Our STOPDATA for the regency being installed, until its SYNC is accepted.</summary>
    public StopData? OwnStopData { get; private set; }

    /// <summary>The SYNC we built as leader of the installed regency.</summary>
    public Sync? OwnSync { get; private set; }

    /// <summary>The instance the installed regency's SYNC started at: nothing below it runs in this regency.</summary>
    public long Floor { get; private set; }

    /// <summary>The value the installed regency's SYNC bound for the instance below its own, until we execute it.</summary>
    public (long Cid, Batch Value)? BoundPrior { get; private set; }

    /// <summary>SYNC time-outs in a row; each doubles the next wait (up to 32 times the configured one).</summary>
    public int FailedSyncs => _failedSyncs;

    /// <summary>Raises our wish to <paramref name="regency"/>; false when we already asked for that much, so complaints do not stack.</summary>
    public bool RaiseOwnWish(int regency)
    {
        if (_wished[_self] >= regency)
        {
            return false;
        }
        _wished[_self] = regency;
        return true;
    }

    /// <summary>A peer's STOP: wishes only go up.</summary>
    public void RecordWish(int replica, int regency)
    {
        if (regency > _wished[replica])
        {
            _wished[replica] = regency;
        }
    }

    /// <summary>
    /// The regency f+1 replicas ask for when it is above both the installed one and ours: a correct replica
    /// asks for it, so we join. The (f+1)-th highest wish ignores up to f liars.
    /// </summary>
    public int? RegencyToJoin(int installed)
    {
        var join = HighestWish(_config.F);
        return join > installed && join > OwnWish ? join : null;
    }

    /// <summary>The regency 2f+1 replicas ask for when it is above the installed one: it can be installed.</summary>
    public int? RegencyToInstall(int installed)
    {
        var install = HighestWish(_config.Quorum - 1);
        return install > installed ? install : null;
    }

    private int HighestWish(int rank)
    {
        var wishes = (int[])_wished.Clone();
        Array.Sort(wishes);
        Array.Reverse(wishes);
        return wishes[rank];
    }

    public void NoteStopBroadcast(long now) => _lastStopBroadcast = now;

    /// <summary>An unanswered complaint is repeated every retransmission interval.</summary>
    public bool StopRebroadcastDue(int installed, long now, long interval) =>
        OwnWish > installed && now - _lastStopBroadcast >= interval;

    /// <summary>When the unanswered complaint is next repeated, or never.</summary>
    public long NextStopWakeup(int installed, long interval) =>
        OwnWish > installed ? _lastStopBroadcast + interval : long.MaxValue;

    /// <summary>
    /// Starts installing <paramref name="regency"/>: our STOPDATA for it, a SYNC deadline that backs off with
    /// each SYNC that never came, and nothing kept from the regency before (its SYNC, its bound prior value,
    /// STOPDATA for lower regencies).
    /// </summary>
    public void Enter(int regency, StopData ownStopData, long now)
    {
        _wished[_self] = Math.Max(_wished[_self], regency);
        OwnSync = null;
        BoundPrior = null;
        _syncDeadline = now + (_config.SyncTimeoutMs << Math.Min(_failedSyncs, 5));
        OwnStopData = ownStopData;
        foreach (var peer in _stopData.Where(kv => kv.Value.NewRegency < regency).Select(kv => kv.Key).ToList())
        {
            _stopData.Remove(peer);
        }
    }

    /// <summary>The SYNC was not accepted in time: the next wait is longer. True once per deadline.</summary>
    public bool SyncTimedOut(long now)
    {
        if (now < _syncDeadline)
        {
            return false;
        }
        _failedSyncs++;
        _syncDeadline = long.MaxValue;
        return true;
    }

    public void NoteStopDataSent(long now) => _lastStopDataSentAt = now;

    public bool StopDataResendDue(long now, long interval) => now - _lastStopDataSentAt >= interval;

    /// <summary>When the SYNC deadline passes or our STOPDATA is next re-sent, whichever is first.</summary>
    public long NextSyncWakeup(long interval) => Math.Min(_syncDeadline, _lastStopDataSentAt + interval);

    /// <summary>As the new leader we hold our own STOPDATA like any other.</summary>
    public void CollectOwnStopData()
    {
        if (OwnStopData is { } own)
        {
            _stopData[_self] = own;
        }
    }

    /// <summary>A peer's (already validated) STOPDATA; a later one for a lower regency does not replace it.</summary>
    public void CollectStopData(StopData sd)
    {
        if (!_stopData.TryGetValue(sd.From, out var prior) || prior.NewRegency <= sd.NewRegency)
        {
            _stopData[sd.From] = sd;
        }
    }

    /// <summary>
    /// What a SYNC for <paramref name="regency"/> would carry, once 2f+1 STOPDATA for it are here; null before.
    /// The choice is <see cref="SyncChoice"/>'s; the bound values come from the certificates' own values.
    /// </summary>
    public SyncPlan? PlanSync(int regency)
    {
        var evidence = _stopData.Values.Where(s => s.NewRegency == regency).OrderBy(s => s.From).ToList();
        if (evidence.Count < _config.Quorum)
        {
            return null;
        }
        var choice = SyncChoice.Choose(evidence, _config);
        Batch? value = null;
        Batch? prior = null;
        if (choice.BoundHash is { } bound)
        {
            value = CertifiedValue(evidence, choice.ConsensusId, bound);
            if (choice.PriorHash is { } priorHash)
            {
                prior = CertifiedValue(evidence, choice.ConsensusId - 1, priorHash);
            }
        }
        return new SyncPlan(evidence, choice, value, prior);
    }

    private static Batch? CertifiedValue(IEnumerable<StopData> evidence, long cid, Digest hash) =>
        evidence.SelectMany(s => s.Certificates)
            .FirstOrDefault(c => c.ConsensusId == cid && c.BatchHash == hash && c.Value is not null)?.Value;

    public void SyncBuilt(Sync sync) => OwnSync = sync;

    /// <summary>The installed regency's SYNC was accepted: it fixes the floor and the bound prior value; the back-off starts over.</summary>
    public void Synced(Sync sync)
    {
        Floor = sync.ConsensusId;
        BoundPrior = sync.PriorValue is { } pv ? (sync.ConsensusId - 1, pv) : null;
        _failedSyncs = 0;
        _syncDeadline = long.MaxValue;
        OwnStopData = null;
    }

    public void ForgetBoundPrior() => BoundPrior = null;

    /// <summary>A peer that missed our SYNC gets it again at most once per interval. True when it is due now (and noted).</summary>
    public bool MayResendSync(int peer, long now, long interval) => Throttle(_syncResentAt, peer, now, interval);

    /// <summary>The leader of a regency we missed is nudged at most once per interval. True when it is due now (and noted).</summary>
    public bool MayNudge(int leader, long now, long interval) => Throttle(_nudgedAt, leader, now, interval);

    private static bool Throttle(Dictionary<int, long> lastAt, int peer, long now, long interval)
    {
        if (lastAt.TryGetValue(peer, out var at) && now - at < interval)
        {
            return false;
        }
        lastAt[peer] = now;
        return true;
    }
}
