using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Diagnostics;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Replica;

/// <summary>
/// The replica-SQ state machine (paper 4.3.3 and 4.4), run by the ordering library on every replica
/// over the same decided ordering requests. Per item: check (e) (signature, sequence window, receiver
/// room, grant), the reorder buffer, check (f) (rules), then the receiver's queue and an output batch.
/// It also answers ACKREQs with ACKRES (loss rate, acknowledged prefix, pre-SQ assignment), takes
/// WARNREQs and receiver acknowledgements, and keeps suspicion counters for senders and pre-SQs.
/// <para>
/// Deterministic: time is the agreed <see cref="DecisionContext.Timestamp"/>; all arithmetic is
/// integer; every collection that is iterated is sorted; signature verdicts are pure functions of the
/// bytes whether cached or computed inline. Not thread-safe: the ordering host calls it from its one
/// execution thread, and so must callers of its read-only helpers (<see cref="AnswerBodyFetch"/>,
/// <see cref="QueueLength"/> and the like). Other threads read <see cref="ReadModel"/>, published after
/// each execution and restore, and never wait for execution.
/// </para>
/// <para>
/// It sends nothing: what an execution produces for the world (output batches, ACKRES, controller
/// notices) comes back from <see cref="Execute"/> as <see cref="OutboxContents"/>, for the host to route.
/// </para>
/// </summary>
public sealed partial class SieveReplicaApplication : IReplicatedApplication
{
    private const string Component = "replica-sq";

    private readonly PublicKeyDirectory _keys;
    private readonly ReplicaSieveOptions _options;
    private readonly IApplicationRules _rules;
    private readonly ItemAuthenticator _auth;
    private readonly ReplicaOutbox _outbox = new();
    private readonly DropCounters _drops = new(Component);
    private readonly RuleDenialCounters _ruleDenials = new();
    private readonly IRuleSetControl? _ruleSets;
    private SieveReadModel _readModel = SieveReadModel.Empty;
    private long _restores;

    private SortedDictionary<int, SenderRecord> _senders = [];
    private SortedDictionary<int, PreSqRecord> _preSqs = [];
    private SortedDictionary<int, ReceiverQueue> _receivers = [];
    private ReorderBuffer _reorder = new();
    private long _now;
    private long _processed;
    private long _lastCapacityNoticeMs = long.MinValue / 2;

    // Approved items of the current execution, per receiver; flushed into output batches at its end.
    private readonly SortedDictionary<int, List<QueuedItem>> _pendingOutputs = [];

    public SieveReplicaApplication(PublicKeyDirectory keys, ReplicaSieveOptions options, IApplicationRules rules, SignatureVerdictCache? verdicts = null)
    {
        ArgumentNullException.ThrowIfNull(keys);
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(rules);
        options.Validate();
        SieveStateBudget.Check(options, keys.SenderCount, keys.ReceiverCount, keys.PreSqIds.Count);
        _keys = keys;
        _options = options;
        _rules = rules;
        _ruleSets = rules as IRuleSetControl;
        _auth = new ItemAuthenticator(keys, verdicts ?? new SignatureVerdictCache(), rules as IPayloadPrescan);
        PublishReadModel();
    }

    /// <summary>The verifier the ordering host should run before ordering; it shares this replica's verdict cache (with the rules' payload prescans) and rule-set preparation.</summary>
    public SieveRequestVerifier CreateVerifier(int parallelFrom = 16, IStageMarks? marks = null) => new(_auth, parallelFrom, _ruleSets, marks);

    /// <summary>The application rules (check f) this replica runs; read them only from the execution thread (others: <see cref="SieveReadModel.RuleSets"/>).</summary>
    public IApplicationRules Rules => _rules;

    public DropCounters Drops => _drops;

    /// <summary>Denials of check (f) by deciding rule (bounded).</summary>
    public RuleDenialCounters RuleDenials => _ruleDenials;

    public SignatureVerdictCache Verdicts => _auth.Cache;

    /// <summary>Where the execution of sampled messages is reported (the host's stage trace); never agreed state.</summary>
    public IStageMarks Marks { get; init; } = NoStageMarks.Instance;

    /// <summary>Number of rule evaluations so far (the reorder buffer's clock).</summary>
    public long Processed => _processed;

    public int HeldCount => _reorder.Count;

    /// <summary>The state as it stood after the last execution or restore; for any thread, never waits.</summary>
    public SieveReadModel ReadModel => Volatile.Read(ref _readModel);

    public ExecutionOutcome Execute(DecisionContext context, IReadOnlyList<ClientRequest> requests)
    {
        ArgumentNullException.ThrowIfNull(requests);
        if (Marks.Enabled)
        {
            foreach (var r in requests)
            {
                Marks.MarkOrderingPayload(StageNames.ReplicaExecuted, r.Payload);
            }
        }
        _now = Math.Max(_now, context.Timestamp);
        var results = new byte[requests.Count][];
        for (var i = 0; i < requests.Count; i++)
        {
            var tally = new Tally();
            results[i] = ExecuteOne(requests[i], ref tally)
                ?? ExecuteResultCodec.Encode(new ExecuteResult(tally.Accepted, tally.Held, tally.Dropped)
                {
                    Untaken = tally.Untaken ?? [],
                    Quarantined = tally.Quarantined is { } q ? [.. q.Select(e => new SenderQuarantineHold(e.Key, e.Value))] : [],
                });
        }
        FlushOutputs();
        // Published before the outputs leave, so a reader that finds an item missing here gets it from them.
        PublishReadModel();
        return new ExecutionOutcome(results, _outbox.IsEmpty ? null : _outbox.Drain());
    }

    /// <summary>Null for an ordinary request (its result is the tally); a rule-set command's own result otherwise.</summary>
    private byte[]? ExecuteOne(ClientRequest request, ref Tally t)
    {
        OrderingRequest payload;
        try
        {
            payload = OrderingRequestCodec.Decode(request.Payload);
        }
        catch (MalformedEnvelopeException)
        {
            Drop(SieveStage.Parse, DropReason.Malformed, ref t);
            SuspectPreSq(request.From, _options.MalformedPreSqWeight);
            return null;
        }
        if (payload.Origin != request.From)
        {
            Drop(SieveStage.Parse, DropReason.WrongOrigin, ref t, payload.Items.Count);
            SuspectPreSq(request.From, _options.MalformedPreSqWeight);
            return null;
        }
        if (RuleSetCommandIn(payload) is { } command)
        {
            return ExecuteRuleSetCommand(payload, command, ref t);
        }
        if (AdminCommandIn(payload) is { } adminCommand)
        {
            return ExecuteAdminCommand(payload, adminCommand, ref t);
        }
        if (EnrolmentQueryIn(payload) is { } query)
        {
            return ExecuteEnrolmentQuery(query, ref t);
        }
        if (IdLeaseIn(payload) is { } lease)
        {
            return ExecuteIdLease(request.From, lease, ref t);
        }
        var fromPreSq = _keys.IsPreSq(request.From);
        var preSqQuarantined = fromPreSq && PreSqOf(request.From).Suspicion.IsQuarantined(_now, _options.PreSqSuspicion);
        var preSqQuarantinedByAdministrator = fromPreSq && _admin.QuarantinedPreSqs.Contains(request.From);
        foreach (var item in payload.Items)
        {
            var kind = (StructureKind)item.Span[0];
            if (kind == StructureKind.ReceiverAck)
            {
                // Receivers' acks are authenticated by their own signature, whoever submits them.
                HandleReceiverAck(item, ref t);
                continue;
            }
            if (!fromPreSq)
            {
                Drop(SieveStage.Parse, DropReason.WrongOrigin, ref t);
                continue;
            }
            if (preSqQuarantinedByAdministrator)
            {
                // Not taken: the sender sends it again through another pre-SQ (its ACKREQs are refused here too).
                Drop(SieveStage.ReplicaAdmission, DropReason.AdminQuarantined, ref t);
                continue;
            }
            if (preSqQuarantined)
            {
                Drop(SieveStage.ReplicaAdmission, DropReason.Quarantined, ref t);
                continue;
            }
            switch (kind)
            {
                case StructureKind.SenderMessage:
                    AdmitSenderMessage(request.From, item, ref t);
                    break;
                case StructureKind.AckRequest:
                    HandleAckRequest(request.From, item, ref t);
                    break;
                case StructureKind.LoadWarning:
                    HandleLoadWarning(request.From, item, ref t);
                    break;
                default:
                    Drop(SieveStage.Parse, DropReason.Malformed, ref t);
                    break;
            }
            ReleaseExpired(ref t);
        }
        return null;
    }

    private void FlushOutputs()
    {
        foreach (var (receiver, items) in _pendingOutputs)
        {
            var q = _receivers[receiver];
            for (var at = 0; at < items.Count; at += _options.OutputBatchMaxItems)
            {
                var chunk = items.GetRange(at, Math.Min(_options.OutputBatchMaxItems, items.Count - at));
                _outbox.Add(new OutboxBatch(receiver, q.NextBatchNo++, chunk));
            }
        }
        _pendingOutputs.Clear();
    }

    /// <summary>
    /// Answers a post-SQ's body fetch from the receiver queue. <paramref name="ringFor"/> gives this
    /// replica's MAC ring with a receiver. Returns null for a request that fails its MAC or is not
    /// addressed to this replica; unknown or mismatching items are left out.
    /// </summary>
    public byte[]? AnswerBodyFetch(ReadOnlyMemory<byte> request, int replica, Func<int, MacKeyRing?> ringFor)
    {
        if (AuthenticateBodyFetch(request.Span, replica, ringFor, out var ring, out var refused) is not { } req)
        {
            _drops.Count(refused == DropReason.Malformed ? SieveStage.Parse : SieveStage.Vote, refused);
            return null;
        }
        return BodyFetchCodec.EncodeResponse(replica, req.Receiver, req.Nonce, FindBodies(req), ring!);
    }

    /// <summary>
    /// The unauthenticated half of a body fetch, which touches no state: decode and check its MAC. Hosts run it
    /// before looking anything up, so a flood of forged fetches costs no lookup.
    /// </summary>
    public static BodyFetchRequest? AuthenticateBodyFetch(ReadOnlySpan<byte> request, int replica, Func<int, MacKeyRing?> ringFor, out MacKeyRing? ring, out DropReason refused)
    {
        ArgumentNullException.ThrowIfNull(ringFor);
        ring = null;
        refused = DropReason.Malformed;
        BodyFetchRequest req;
        try
        {
            req = BodyFetchCodec.DecodeRequest(request);
        }
        catch (MalformedEnvelopeException)
        {
            return null;
        }
        ring = ringFor(req.Receiver);
        if (req.Replica != replica || ring is null || !BodyFetchCodec.VerifyRequestMac(request, ring))
        {
            refused = DropReason.BadMac;
            return null;
        }
        return req;
    }

    /// <summary>The queued bodies an authenticated fetch asks for (unknown or mismatching items left out), as of the last execution.</summary>
    public List<FetchedBody> FindBodies(BodyFetchRequest req) => ReadModel.FindBodies(req);

    /// <summary>Unacknowledged messages for a receiver as of the last execution (see <see cref="SieveReadModel.PendingFor"/>).</summary>
    public OutboxBatch? PendingFor(int receiver, int maxItems) => ReadModel.PendingFor(receiver, maxItems);

    public int QueueLength(int receiver) => _receivers.TryGetValue(receiver, out var q) ? q.Count : 0;

    /// <summary>Charged bytes queued for the receiver and reserved by messages held for it.</summary>
    public long QueueBytes(int receiver) => _receivers.TryGetValue(receiver, out var q) ? q.OccupancyBytes : 0;

    /// <summary>Charged bytes of the held messages.</summary>
    public long HeldBytes => _reorder.Bytes;

    public int? AssignedPreSq(int sender) => _senders.TryGetValue(sender, out var s) && s.AssignedPreSq >= 0 ? s.AssignedPreSq : null;

    public long SenderSuspicion(int sender) => _senders.TryGetValue(sender, out var s) ? s.Suspicion.Value(_now, _options.SenderSuspicion) : 0;

    public bool IsSenderQuarantined(int sender) => _admin.QuarantinedSenders.Contains(sender)
        || (_senders.TryGetValue(sender, out var s) && s.Suspicion.IsQuarantined(_now, _options.SenderSuspicion));

    public long PreSqSuspicion(int preSq) => _preSqs.TryGetValue(preSq, out var p) ? p.Suspicion.Value(_now, _options.PreSqSuspicion) : 0;

    public bool IsPreSqQuarantined(int preSq) => _admin.QuarantinedPreSqs.Contains(preSq)
        || (_preSqs.TryGetValue(preSq, out var p) && p.Suspicion.IsQuarantined(_now, _options.PreSqSuspicion));

    /// <summary>The sender's acknowledged prefix (what ACKRES reports).</summary>
    public long DeliveredUpTo(int sender) => _senders.TryGetValue(sender, out var s) ? s.Window.ContiguousUpTo : 0;

    /// <summary>Current grant scale of a sender in thousandths (back-pressure shows here).</summary>
    public int GrantScalePermille(int sender) => _senders.TryGetValue(sender, out var s) ? s.Grant.ScalePermille : 1000;

    private SenderRecord SenderOf(int sender)
    {
        if (!_senders.TryGetValue(sender, out var s))
        {
            s = new SenderRecord(
                new SequenceWindow(_options.WindowSize, _options.MaxAhead, adoptFirst: false),
                new GrantBucket(_options.GrantRatePerSecond, _options.GrantBurst, _now));
            _senders.Add(sender, s);
        }
        return s;
    }

    private PreSqRecord PreSqOf(int preSq)
    {
        if (!_preSqs.TryGetValue(preSq, out var p))
        {
            p = new PreSqRecord();
            _preSqs.Add(preSq, p);
        }
        return p;
    }

    private ReceiverQueue QueueOf(int receiver)
    {
        if (!_receivers.TryGetValue(receiver, out var q))
        {
            q = new ReceiverQueue();
            _receivers.Add(receiver, q);
        }
        return q;
    }

    private void Drop(SieveStage stage, DropReason reason, ref Tally t, int count = 1)
    {
        t.Dropped += count;
        _drops.Count(stage, reason, count);
    }

    private void SuspectPreSq(int preSq, int weight)
    {
        if (weight <= 0 || !_keys.IsPreSq(preSq))
        {
            return;
        }
        if (PreSqOf(preSq).Suspicion.Add(_now, weight, _options.PreSqSuspicion))
        {
            _outbox.Add(new ControllerNotice(ControllerAction.RemovePreSq, preSq, _now));
        }
    }

    private void SuspectSender(int sender, int weight)
    {
        if (weight <= 0 || !_keys.IsSender(sender))
        {
            return;
        }
        if (SenderOf(sender).Suspicion.Add(_now, weight, _options.SenderSuspicion))
        {
            _quarantineCandidates.Add(sender);
            _outbox.Add(new ControllerNotice(ControllerAction.SenderQuarantined, sender, _now));
        }
    }

    private struct Tally
    {
        public int Accepted;
        public int Held;
        public int Dropped;
        public List<UntakenMessage>? Untaken;

        /// <summary>Sorted, so every correct replica encodes the same bytes.</summary>
        public SortedDictionary<int, long>? Quarantined;

        public void RefusedUntaken(int sender, long seq) => (Untaken ??= []).Add(new UntakenMessage(sender, seq));

        public void SenderQuarantined(int sender, long holdMs)
        {
            Quarantined ??= [];
            Quarantined[sender] = Math.Max(holdMs, Quarantined.GetValueOrDefault(sender));
        }
    }
}
