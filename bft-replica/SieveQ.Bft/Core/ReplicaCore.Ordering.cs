using SieveQ.Bft.Codec;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

// The normal case: PROPOSE, WRITE, ACCEPT, decide, execute.
public sealed partial class ReplicaCore
{
    private long _rerunCid;

    /// <summary>
    /// The regency a restart recovered into. We may have sent a WRITE in it that never reached
    /// the disk; writing again could contradict it, so we only WRITE from the next regency on.
    /// </summary>
    private int _amnesiacRegency = -1;

    /// <summary>
    /// Whether our disk holds anything that gates sends. A restart from an empty log is told apart
    /// from a first start only by this: until it is true, our first WRITE is preceded by a durable
    /// record, so a replica that WROTE and then lost power always recovers as an amnesiac.
    /// </summary>
    private bool _diskMarked;
    private readonly Dictionary<(int Peer, long Cid), long> _helpedAt = [];

    private void MarkDiskBeforeFirstWrite()
    {
        if (!_diskMarked)
        {
            Emit(new Persist(new RegencyRecord(Regency)));
        }
    }

    private InstanceState Instance(long cid)
    {
        if (!_instances.TryGetValue(cid, out var inst))
        {
            inst = new InstanceState(cid, _now);
            _instances[cid] = inst;
        }
        return inst;
    }

    /// <summary>
    /// Shared admission for normal-case messages: right regency and mode, and an instance inside
    /// the window [current, current + MaxFutureInstances]. Older ones may get help; newer ones are
    /// a flood and only count as progress evidence.
    /// </summary>
    private InstanceState? Admit(BftMessage m, int regency, long cid, string kind)
    {
        NoteProgress(m.From, cid - 1);
        if (regency != Regency || Mode != ReplicaMode.Normal)
        {
            if (regency > Regency)
            {
                Counters.Add($"drop.{kind}.future-regency");
                // Only the claimed leader's own message earns it a nudge: a nudge is a STOP naming that regency,
                // which the leader counts as a wish. Were a peer's message enough, one mutated WRITE from a
                // Byzantine peer would make a correct replica wish for a far regency at its leader; with the liar's
                // own wish that is f+1, and the leader would jump there alone, out of reach of any quorum.
                if (m.From == LeaderOf(regency))
                {
                    NudgeLeaderOf(regency);
                }
            }
            else
            {
                Counters.Add($"drop.{kind}.stale-regency");
            }
            return null;
        }
        if (cid < CurrentCid)
        {
            Counters.Add($"drop.{kind}.old-instance");
            HelpLaggingPeer(m.From, cid, regency);
            return null;
        }
        if (cid > CurrentCid + Config.MaxFutureInstances)
        {
            Counters.Add($"drop.{kind}.far-future");
            CheckBehind();
            return null;
        }
        return Instance(cid);
    }

    private void OnPropose(Propose p)
    {
        if (p.From != LeaderOf(p.Regency))
        {
            Counters.Add("drop.propose.not-leader");
            return;
        }
        if (p.Regency == Regency)
        {
            _lastHeardFromLeader = _now;
        }
        if (p.Regency == Regency && p.ConsensusId < _regencyChange.Floor)
        {
            Counters.Add("drop.propose.below-sync");
            return;
        }
        var inst = Admit(p, p.Regency, p.ConsensusId, "propose");
        if (inst is null)
        {
            return;
        }
        if (inst.Proposal is not null)
        {
            Counters.Add(inst.Proposal.Hash == p.Value.Hash ? "propose.duplicate" : "drop.propose.equivocation");
            return;
        }
        inst.Proposal = p.Value;
        Advance(inst);
    }

    private void OnWrite(Write w)
    {
        if (w.From == Leader && w.Regency == Regency)
        {
            _lastHeardFromLeader = _now;
        }
        var inst = Admit(w, w.Regency, w.ConsensusId, "write");
        if (inst is null)
        {
            return;
        }
        if (inst.Writes.TryGetValue(w.From, out var prior))
        {
            Counters.Add(prior.Hash == w.BatchHash ? "write.duplicate" : "drop.write.equivocation");
            return;
        }
        inst.Writes[w.From] = (w.BatchHash, w.Signature);
        Advance(inst);
    }

    private void OnAccept(Accept a)
    {
        if (a.From == Leader && a.Regency == Regency)
        {
            _lastHeardFromLeader = _now;
        }
        var inst = Admit(a, a.Regency, a.ConsensusId, "accept");
        if (inst is null)
        {
            return;
        }
        if (inst.Accepts.TryGetValue(a.From, out var prior))
        {
            Counters.Add(prior == a.BatchHash ? "accept.duplicate" : "drop.accept.equivocation");
            return;
        }
        inst.Accepts[a.From] = a.BatchHash;
        Advance(inst);
    }

    private void OnHeartbeat(Heartbeat h)
    {
        NoteProgress(h.From, h.LastDecided);
        if (h.Regency == Regency && h.From == Leader)
        {
            _lastHeardFromLeader = _now;
        }
        else if (h.Regency > Regency && h.From == LeaderOf(h.Regency))
        {
            NudgeLeaderOf(h.Regency);
        }
        CheckBehind();
    }

    /// <summary>
    /// Moves the current instance forward as far as its messages allow: WRITE once the proposal
    /// is judged valid, ACCEPT once prepared (2f+1 matching WRITEs), decide on 2f+1 ACCEPTs.
    /// </summary>
    private void Advance(InstanceState inst)
    {
        if (inst.ConsensusId != CurrentCid || Mode != ReplicaMode.Normal)
        {
            if (inst.ConsensusId > CurrentCid && inst.AcceptedBy(Config.Quorum) is not null)
            {
                // 2f+1 ACCEPTs for a later instance: proof that we are behind.
                StartStateTransfer("accepted-ahead");
            }
            return;
        }
        if (inst.Proposal is { } value && !inst.SentWrite && Regency != _amnesiacRegency)
        {
            var fault = inst.ProposalPrechecked ? null : JudgeProposal(value);
            if (fault is not null)
            {
                Counters.Add($"drop.propose.{fault}");
                inst.Proposal = null;
                Complain($"bad-proposal-{fault}");
                return;
            }
            MarkDiskBeforeFirstWrite();
            var sig = _signer.Sign(SigningBytes.ForWrite(Regency, inst.ConsensusId, value.Hash));
            inst.SentWrite = true;
            inst.OwnWriteSignature = sig;
            inst.Writes[Self] = (value.Hash, sig);
            inst.ActiveSince = _now;
            inst.LastRetransmitAt = _now;
            Broadcast(new Write(Self, Regency, inst.ConsensusId, value.Hash, sig));
        }
        if (inst.Proposal is { } v && inst.SentWrite && !inst.Prepared && inst.WritesFor(v.Hash) >= Config.Quorum)
        {
            inst.Prepared = true;
            var writes = inst.Writes.Where(kv => kv.Value.Hash == v.Hash)
                .OrderBy(kv => kv.Key)
                .Take(Config.Quorum)
                .Select(kv => new WriteSignature(kv.Key, kv.Value.Signature))
                .ToArray();
            var cert = new PreparedCertificate(inst.ConsensusId, Regency, v.Hash, v, writes);
            KeepCertificate(cert);
            Emit(new Persist(new PreparedRecord(cert)));
            inst.SentAccept = true;
            inst.Accepts[Self] = v.Hash;
            Broadcast(new Accept(Self, Regency, inst.ConsensusId, v.Hash));
        }
        if (inst.AcceptedBy(Config.Quorum) is { } decided)
        {
            if (inst.Proposal is { } value2 && value2.Hash == decided)
            {
                Decide(inst, value2);
            }
            else
            {
                // Decided elsewhere, but the value we hold (if any) is not it: fetch it.
                StartStateTransfer("decided-value-missing");
            }
        }
    }

    /// <summary>
    /// Why a proposal must be refused, or null. Timestamps: not before the last decided one, not more
    /// than the skew ahead of our clock, and not older than the skew plus one request time-out. The
    /// past side is wider because a large proposal under load waits in send and receive queues before
    /// it is judged here; refusing it for that lag turned overload into endless regency changes. A
    /// leader cannot stamp older than that, and a follower complains about a leader that slow anyway.
    /// </summary>
    /// <param name="resentSync">
    /// The value is the fresh value of a SYNC that may have been built long before this replica sees it
    /// (a replica that missed the regency change asks for it later). Its timestamp was judged by the
    /// quorum that accepted the SYNC at the time, so here only "not behind what we decided" and "not in
    /// the future" are checked; the too-old side of the skew window would refuse it forever.
    /// </param>
    private string? JudgeProposal(Batch value, bool resentSync = false)
    {
        if (value.Requests.Count > Config.MaxBatchRequests || value.EncodedSize > Config.MaxBatchBytes + 1024)
        {
            return "oversized";
        }
        if (value.Timestamp < LastDecidedTimestamp)
        {
            return "timestamp-backwards";
        }
        if (value.Timestamp - _now > Config.TimestampSkewMs || (!resentSync && _now - value.Timestamp > Config.TimestampSkewMs + Config.RequestTimeoutMs))
        {
            return "timestamp-skew";
        }
        var ids = new HashSet<RequestId>();
        foreach (var r in value.Requests)
        {
            if (r.From < Config.N || !ids.Add(r.Id))
            {
                return "bad-request-set";
            }
        }
        return null;
    }

    private void Decide(InstanceState inst, Batch value)
    {
        if (inst.ConsensusId <= LastDecided)
        {
            // A re-run of an instance we had decided: it must have re-decided the same value.
            if (_decidedLog.TryGetValue(inst.ConsensusId, out var prior) && prior.Hash != value.Hash)
            {
                Counters.Add("safety.rerun-mismatch");
            }
            _rerunCid = 0;
            _instances.Remove(inst.ConsensusId);
        }
        else
        {
            Execute(inst.ConsensusId, value);
        }
        ActivateCurrent();
    }

    /// <summary>After a decision or a state install, the next instance may already hold buffered messages.</summary>
    private void ActivateCurrent()
    {
        CheckBoundPrior();
        ApplyBoundPrior();
        foreach (var stale in _instances.Keys.Where(c => c < CurrentCid).ToList())
        {
            _instances.Remove(stale);
        }
        if (_instances.TryGetValue(CurrentCid, out var next))
        {
            next.ActiveSince = _now;
            next.LastRetransmitAt = _now;
            Advance(next);
        }
    }

    /// <summary>Runs a decided batch: requests already executed or outside their window are skipped, identically everywhere.</summary>
    private void Execute(long cid, Batch value)
    {
        Emit(new Persist(new DecisionRecord(cid, value)));
        var fresh = new List<ClientRequest>(value.Requests.Count);
        var seen = new HashSet<RequestId>();
        foreach (var r in value.Requests)
        {
            if (seen.Add(r.Id) && r.From >= Config.N && _clients.Admissible(r.From, r.Sequence, Config.ClientWindow, Config.MaxClients))
            {
                fresh.Add(r);
            }
        }
        var outcome = _app.Execute(new DecisionContext(cid, value.Timestamp), fresh);
        var results = outcome.Replies;
        if (outcome.Outputs is { } outputs)
        {
            // Not through Emit: a replayed execution's outputs are owed too (see ApplicationOutputs).
            _out.Add(new ApplicationOutputs(cid, outputs));
        }
        for (var i = 0; i < fresh.Count; i++)
        {
            var r = fresh[i];
            var result = i < results.Count ? results[i] : [];
            if (result.Length > WireLimits.MaxResultBytes)
            {
                // Every replica gets the same result, so refusing it is deterministic too.
                Counters.Add("app.result-too-large");
                result = [];
            }
            _clients.MarkExecuted(r.From, r.Sequence, cid, result);
            SendTo(r.From, new Reply(Self, r.From, r.Sequence, cid, result));
        }
        foreach (var r in value.Requests)
        {
            _pool.Remove(r.Id);
        }
        LastDecided = cid;
        LastDecidedTimestamp = Math.Max(LastDecidedTimestamp, value.Timestamp);
        _lastDecisionAt = _now;
        _decidedLog[cid] = new DecidedEntry(cid, value.Hash, value, _now);
        _instances.Remove(cid);
        Counters.Add("decided");
        Counters.Add("executed", fresh.Count);
        Emit(new Decided(cid, value, fresh.Count));
        if (cid % Config.CheckpointInterval == 0)
        {
            TakeCheckpoint();
        }
    }

    /// <summary>Keeps the certificates of the two highest instances prepared (highest regency per instance).</summary>
    private void KeepCertificate(PreparedCertificate cert)
    {
        var same = _certificates.FindIndex(c => c.ConsensusId == cert.ConsensusId);
        if (same >= 0)
        {
            if (_certificates[same].Regency >= cert.Regency)
            {
                return;
            }
            _certificates.RemoveAt(same);
        }
        _certificates.Add(cert);
        _certificates.Sort((a, b) => b.ConsensusId.CompareTo(a.ConsensusId));
        while (_certificates.Count > WireLimits.MaxCertificates)
        {
            _certificates.RemoveAt(_certificates.Count - 1);
        }
    }

    /// <summary>
    /// Over lossy links an undecided instance re-sends our part of it; a lagging peer's messages
    /// for an instance we already decided are answered with our ACCEPT for it.
    /// </summary>
    private void RetransmitCurrentInstance()
    {
        if (!_instances.TryGetValue(CurrentCid, out var inst) || _now - inst.LastRetransmitAt < RetransmitIntervalMs)
        {
            return;
        }
        inst.LastRetransmitAt = _now;
        if (IsLeader && inst.Proposal is { } p)
        {
            Broadcast(new Propose(Self, Regency, inst.ConsensusId, p));
        }
        if (inst.SentWrite && inst.Proposal is { } v && inst.OwnWriteSignature is { } sig)
        {
            Broadcast(new Write(Self, Regency, inst.ConsensusId, v.Hash, sig));
            Counters.Add("retransmit.instance");
        }
        if (inst.SentAccept && inst.Proposal is { } v2)
        {
            Broadcast(new Accept(Self, Regency, inst.ConsensusId, v2.Hash));
        }
    }

    /// <summary>
    /// Answers in the peer's regency whatever regency we decided in: a decided value is the only one
    /// any regency can ever decide for that instance, so vouching for it there cannot mislead. Matching
    /// regencies only left a peer stuck when it joined a re-run of an instance the others had already
    /// re-decided (or had taken by state transfer) while the fleet was idle.
    /// <para>
    /// Only a peer still asking a heartbeat interval after our decision is helped. In the normal case
    /// the slowest replica's WRITE and ACCEPT arrive just after the quorum decided without it; answering
    /// each of those cost one and a half extra messages per instance per replica, for peers that were
    /// about to decide anyway. A peer that is really stuck re-sends every two heartbeat intervals.
    /// </para>
    /// </summary>
    private void HelpLaggingPeer(int peer, long cid, int regency)
    {
        if (!_decidedLog.TryGetValue(cid, out var e) || _now - e.DecidedAt < Config.HeartbeatIntervalMs)
        {
            return;
        }
        var key = (peer, cid);
        if (_helpedAt.TryGetValue(key, out var at) && _now - at < RetransmitIntervalMs)
        {
            return;
        }
        if (_helpedAt.Count > 4 * Config.N * Config.MaxFutureInstances)
        {
            _helpedAt.Clear();
        }
        _helpedAt[key] = _now;
        SendTo(peer, new Accept(Self, regency, cid, e.Hash));
        Counters.Add("help.accept-resent");
    }
}
