using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

// Request intake, the per-request time-outs that police the leader, and the leader's proposals.
public sealed partial class ReplicaCore
{
    private long _lastHeardFromLeader;
    private long _lastDecisionAt;
    private long _regencySince;
    private long _lastLeaderBroadcast;

    private void OnClientRequest(ClientRequest r)
    {
        if (_clients.IsExecuted(r.From, r.Sequence))
        {
            // A retransmission: the client may have missed our reply.
            if (_clients.FindReply(r.From, r.Sequence) is { } reply)
            {
                SendTo(r.From, new Reply(Self, r.From, r.Sequence, reply.ConsensusId, reply.Result));
                Counters.Add("reply.resent");
            }
            else
            {
                Counters.Add("drop.request.executed-reply-forgotten");
            }
            return;
        }
        AdmitRequest(r, "request");
    }

    /// <summary>Adds a verified request to the pool if it is new, inside its client's window and there is room.</summary>
    private bool AdmitRequest(ClientRequest r, string source)
    {
        if (_pool.Contains(r.Id))
        {
            Counters.Add($"{source}.duplicate");
            return false;
        }
        if (r.Payload.Length > Config.MaxRequestPayloadBytes)
        {
            // No batch could carry it: proposed alone it would be refused as oversized, and the complaints
            // would change regency for ever. Correct clients never send one.
            Counters.Add($"drop.{source}.too-large");
            return false;
        }
        if (!_clients.Admissible(r.From, r.Sequence, Config.ClientWindow, Config.MaxClients))
        {
            Counters.Add($"drop.{source}.outside-window");
            return false;
        }
        if (!_pool.TryAdd(r, _now))
        {
            Counters.Add($"drop.{source}.pool-full");
            return false;
        }
        Counters.Add($"{source}.admitted");
        return true;
    }

    private void OnForward(Forward f)
    {
        if (!IsLeader)
        {
            Counters.Add("drop.forward.not-leader");
            return;
        }
        foreach (var r in f.Requests)
        {
            if (r.From >= Config.N && !_clients.IsExecuted(r.From, r.Sequence))
            {
                AdmitRequest(r, "forward");
            }
        }
    }

    private void TickNormal()
    {
        if (IsLeader)
        {
            if (_now - _lastLeaderBroadcast >= Config.HeartbeatIntervalMs)
            {
                Broadcast(new Heartbeat(Self, Regency, LastDecided));
            }
            TickLeaderSelfPolicing();
        }
        else
        {
            TickFollowerPolicing();
        }
        RetransmitCurrentInstance();
    }

    /// <summary>
    /// A follower's judgement of its leader: silence, requests that age past one time-out
    /// (forwarded) or two (complaint), and decisions that come slower than the configured bound
    /// while work is waiting. Ages are per request, so a steady stream cannot keep a timer alive.
    /// </summary>
    private void TickFollowerPolicing()
    {
        if (_now - _lastHeardFromLeader >= Config.LeaderSilenceTimeoutMs)
        {
            Complain("leader-silent");
            return;
        }
        if (_pool.Oldest is not { } oldest)
        {
            return;
        }
        var age = _now - oldest.ArrivedAt;
        if (age >= 2 * Config.RequestTimeoutMs)
        {
            Complain("request-timeout");
            return;
        }
        if (Config.MaxDecisionIntervalMs > 0
            && age >= Config.MaxDecisionIntervalMs
            && _now - Math.Max(_lastDecisionAt, _regencySince) >= Config.MaxDecisionIntervalMs)
        {
            Complain("slow-leader");
            return;
        }
        if (age >= Config.RequestTimeoutMs)
        {
            var toForward = new List<ClientRequest>();
            foreach (var p in _pool.InArrivalOrder())
            {
                if (_now - p.ArrivedAt < Config.RequestTimeoutMs || toForward.Count >= Codec.WireLimits.MaxRequestsPerForward)
                {
                    break;
                }
                if (!p.Forwarded)
                {
                    p.Forwarded = true;
                    toForward.Add(p.Request);
                }
            }
            if (toForward.Count > 0)
            {
                SendTo(Leader, new Forward(Self, toForward));
                Counters.Add("forwarded", toForward.Count);
            }
        }
    }

    /// <summary>
    /// A leader whose own requests stay undecided for two time-outs cannot order in this regency
    /// (it may have restarted into it and must not WRITE, or its followers are gone): it asks for
    /// the next regency too, since without its wish 2f+1 may never be reached.
    /// </summary>
    private void TickLeaderSelfPolicing()
    {
        if (_pool.Oldest is { } oldest && _now - oldest.ArrivedAt >= 2 * Config.RequestTimeoutMs)
        {
            Complain("leader-cannot-order");
        }
    }

    /// <summary>Builds and sends the next batch when this replica leads and nothing is in flight.</summary>
    private void TryPropose()
    {
        if (!IsLeader || Mode != ReplicaMode.Normal || _stateTransfer.InProgress || _rerunCid != 0 || _pool.Count == 0)
        {
            return;
        }
        var cid = CurrentCid;
        if (cid < _regencyChange.Floor)
        {
            // Decided before this regency, its decision not (yet) ours: state transfer brings it, never a proposal.
            return;
        }
        var inst = Instance(cid);
        if (inst.Proposal is not null)
        {
            return;
        }
        var batch = new Batch(Math.Max(_now, LastDecidedTimestamp), NextBatchRequests());
        inst.Proposal = batch;
        inst.ActiveSince = _now;
        inst.LastRetransmitAt = _now;
        Broadcast(new Propose(Self, Regency, cid, batch));
        Counters.Add("proposed");
        Advance(inst);
    }

    /// <summary>
    /// The pending requests a new batch takes, oldest first, within both batch bounds (count and bytes).
    /// Every batch a leader builds comes from here, a SYNC's fresh value included: one built over the
    /// byte bound is refused by every replica as oversized, and a new leader would build the same
    /// one again from the same pool, changing regency forever.
    /// </summary>
    private List<ClientRequest> NextBatchRequests()
    {
        var requests = new List<ClientRequest>(Math.Min(_pool.Count, Config.MaxBatchRequests));
        var bytes = ReplicaConfig.BatchHeaderBytes;
        foreach (var p in _pool.InArrivalOrder())
        {
            var size = p.Request.Payload.Length + ReplicaConfig.BatchBytesPerRequest;
            if (requests.Count >= Config.MaxBatchRequests || (requests.Count > 0 && bytes + size > Config.MaxBatchBytes))
            {
                break;
            }
            requests.Add(p.Request);
            bytes += size;
        }
        return requests;
    }
}
