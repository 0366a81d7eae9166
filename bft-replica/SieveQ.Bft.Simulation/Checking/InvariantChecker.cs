using SieveQ.Bft.Client;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Bft.Simulation.Application;

namespace SieveQ.Bft.Simulation.Checking;

/// <summary>
/// Safety invariants, checked as events happen. Only correct replicas are judged (crashed and
/// restarted ones are correct; Byzantine ones are not). The first violation is kept and ends the
/// run; later ones would only be consequences of it.
/// </summary>
internal sealed class InvariantChecker : IExecutionObserver
{
    private readonly ReplicaConfig _config;
    private readonly bool[] _correct;
    private readonly Func<long> _now;
    private readonly long _maxClockOffset;

    private readonly Dictionary<long, (Digest Hash, long Timestamp, int By)> _decided = [];
    private readonly Dictionary<long, (Digest Head, int By)> _headAfter = [];
    private readonly Dictionary<RequestId, Digest> _submitted = [];
    private readonly Dictionary<RequestId, (long Cid, Digest Result)> _executedRef = [];

    private readonly int[] _regency;
    private readonly long[] _lastDecided;
    private readonly long[] _lastDecidedOutput;
    private readonly Dictionary<(int From, int To), long> _stateServedAt = [];

    public InvariantChecker(ReplicaConfig config, IReadOnlyList<bool> correct, Func<long> now, long maxClockOffset)
    {
        _config = config;
        _correct = [.. correct];
        _now = now;
        _maxClockOffset = maxClockOffset;
        _regency = new int[config.N];
        _lastDecided = new long[config.N];
        _lastDecidedOutput = new long[config.N];
    }

    public string? Failure { get; private set; }
    public bool Failed => Failure is not null;
    public int ExecutedRequests => _executedRef.Count;
    public long HighestDecided => _decided.Count == 0 ? 0 : _decided.Keys.Max();
    public IReadOnlyDictionary<long, (Digest Hash, long Timestamp, int By)> Decisions => _decided;

    public void Fail(string invariant, string detail)
    {
        Failure ??= $"{invariant} violated at t={_now()}ms: {detail}";
    }

    public void OnSubmitted(ClientRequest request)
    {
        _submitted[request.Id] = Digest.Compute(request.Payload);
    }

    /// <summary>(a) agreement and decided timestamps that never go back nor come from the future.</summary>
    public void OnDecided(int replica, long cid, Batch value)
    {
        if (!_correct[replica])
        {
            return;
        }
        if (cid <= _lastDecidedOutput[replica])
        {
            Fail("instance order", $"replica {replica} decided instance {cid} after instance {_lastDecidedOutput[replica]}");
        }
        _lastDecidedOutput[replica] = cid;
        if (_decided.TryGetValue(cid, out var prior))
        {
            if (prior.Hash != value.Hash)
            {
                Fail("agreement", $"replica {replica} decided {value.Hash} for instance {cid}, replica {prior.By} decided {prior.Hash}");
            }
            return;
        }
        var limit = _now() + _maxClockOffset + _config.TimestampSkewMs;
        if (value.Timestamp > limit)
        {
            Fail("timestamp", $"instance {cid} decided with timestamp {value.Timestamp}, beyond any correct clock plus skew ({limit})");
        }
        if (_decided.TryGetValue(cid - 1, out var before) && before.Timestamp > value.Timestamp)
        {
            Fail("timestamp", $"instance {cid} has timestamp {value.Timestamp}, before instance {cid - 1}'s {before.Timestamp}");
        }
        if (_decided.TryGetValue(cid + 1, out var after) && after.Timestamp < value.Timestamp)
        {
            Fail("timestamp", $"instance {cid} has timestamp {value.Timestamp}, after instance {cid + 1}'s {after.Timestamp}");
        }
        _decided[cid] = (value.Hash, value.Timestamp, replica);
    }

    /// <summary>(c) validity, and one position and result per request across correct replicas.</summary>
    public void OnExecuted(int replica, DecisionContext context, ClientRequest request, Digest headAfter)
    {
        if (!_correct[replica])
        {
            return;
        }
        if (!_submitted.TryGetValue(request.Id, out var payloadHash))
        {
            Fail("validity", $"replica {replica} executed {request.Id} in instance {context.ConsensusId}, which no client submitted");
            return;
        }
        if (payloadHash != Digest.Compute(request.Payload))
        {
            Fail("validity", $"replica {replica} executed {request.Id} in instance {context.ConsensusId} with a payload the client did not send");
            return;
        }
        if (_executedRef.TryGetValue(request.Id, out var reference))
        {
            if (reference.Cid != context.ConsensusId || reference.Result != headAfter)
            {
                Fail("identical prefixes", $"replica {replica} executed {request.Id} in instance {context.ConsensusId} with result {headAfter}; reference: instance {reference.Cid}, result {reference.Result}");
            }
            return;
        }
        _executedRef[request.Id] = (context.ConsensusId, headAfter);
    }

    /// <summary>(b) identical decided prefixes: the ledger head after instance X is the same everywhere.</summary>
    public void OnBatchExecuted(int replica, DecisionContext context, Digest headAfter) => CheckHead(replica, context.ConsensusId, headAfter, "after executing");

    public void OnRestored(int replica, long lastConsensusId, Digest head)
    {
        if (lastConsensusId > 0)
        {
            CheckHead(replica, lastConsensusId, head, "after restoring a snapshot of");
        }
    }

    private void CheckHead(int replica, long cid, Digest head, string how)
    {
        if (!_correct[replica])
        {
            return;
        }
        if (_headAfter.TryGetValue(cid, out var reference))
        {
            if (reference.Head != head)
            {
                Fail("identical prefixes", $"replica {replica} has ledger head {head} {how} instance {cid}; replica {reference.By} had {reference.Head}");
            }
            return;
        }
        _headAfter[cid] = (head, replica);
    }

    /// <summary>(d) double execution and out-of-order execution, found by the ledger itself.</summary>
    public void OnLedgerFault(int replica, string fault)
    {
        if (_correct[replica])
        {
            Fail("no double execution", $"replica {replica}: {fault}");
        }
    }

    /// <summary>(e) regency and last decided instance never go back, across restarts; pending requests stay bounded.</summary>
    public void AfterStep(int replica, ReplicaCore core)
    {
        if (core.PendingRequests > _config.MaxPendingTotal)
        {
            Fail("bounded memory", $"replica {replica} holds {core.PendingRequests} pending requests, above the bound {_config.MaxPendingTotal}");
        }
        if (!_correct[replica])
        {
            return;
        }
        if (core.Regency < _regency[replica])
        {
            Fail("regency monotonic", $"replica {replica} went from regency {_regency[replica]} back to {core.Regency}");
        }
        if (core.LastDecided < _lastDecided[replica])
        {
            Fail("instance monotonic", $"replica {replica} went from last decided {_lastDecided[replica]} back to {core.LastDecided}");
        }
        _regency[replica] = Math.Max(_regency[replica], core.Regency);
        _lastDecided[replica] = Math.Max(_lastDecided[replica], core.LastDecided);
    }

    /// <summary>
    /// The durable log is truncated at checkpoints, down to the previous checkpoint (one interval of
    /// overlap kept for vouching): it holds at most two intervals of decided instances, each with its
    /// decision and a certificate or two, and a window's worth more prepared, whatever the faults.
    /// </summary>
    public void CheckDisk(int replica, int logRecords)
    {
        var bound = (6 * _config.CheckpointInterval) + (2 * _config.MaxFutureInstances) + 16;
        if (_correct[replica] && logRecords > bound)
        {
            Fail("bounded durable log", $"replica {replica} keeps {logRecords} decision and certificate records, above {bound}");
        }
    }

    /// <summary>A client accepted an answer: it must be the one correct replicas computed.</summary>
    public void OnCompleted(int client, CompletedRequest done)
    {
        var id = new RequestId(client, done.Sequence);
        if (!_executedRef.TryGetValue(id, out var reference))
        {
            Fail("client result", $"client {client} accepted a result for {id} that no correct replica computed");
            return;
        }
        if (reference.Cid != done.ConsensusId || done.Result.Length != Digest.Size || new Digest(done.Result) != reference.Result)
        {
            Fail("client result", $"client {client} accepted instance {done.ConsensusId} for {id}; correct replicas executed it in instance {reference.Cid}");
        }
    }

    /// <summary>A correct replica serves a peer's state requests at most once per configured interval.</summary>
    public void OnStateServed(int from, int to, long localNow)
    {
        if (!_correct[from])
        {
            return;
        }
        if (_stateServedAt.TryGetValue((from, to), out var at) && localNow - at < _config.StateServeIntervalMs)
        {
            Fail("state serving rate limit", $"replica {from} served state to {to} at {at} and again at {localNow}");
        }
        _stateServedAt[(from, to)] = localNow;
    }

    /// <summary>
    /// The serving rate limit is soft state: a restarted replica starts afresh. A restart may also take a
    /// replica back below its last decision, to the last one its disk holds: decision records are synced
    /// lazily (they gate no message). Deciding those instances again is judged like any decision: the same
    /// value as every other decision of that instance (agreement), and each request at the same position with
    /// the same result (identical prefixes).
    /// </summary>
    public void OnRestart(int replica, long recoveredLastDecided)
    {
        _lastDecided[replica] = recoveredLastDecided;
        _lastDecidedOutput[replica] = recoveredLastDecided;
        foreach (var key in _stateServedAt.Keys.Where(k => k.From == replica).ToList())
        {
            _stateServedAt.Remove(key);
        }
    }
}
