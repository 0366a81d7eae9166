using System.Collections.Immutable;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;

namespace SieveQ.Sieve.Replica;

/// <summary>A pre-SQ's suspicion as it stood at publication.</summary>
public readonly record struct PreSqStanding(long Suspicion, bool Quarantined);

/// <summary>The pre-SQ a sender is told to use (agreed) and the loss rate (ppm) of its last measurement.</summary>
public readonly record struct SenderAssignment(int PreSq, int LastLossPpm);

/// <summary>
/// What threads other than the execution thread may know of the replicated sieve (gRPC handlers answering
/// body fetches and re-sending pending items, health and status): the state as it stood after one execution,
/// published whole by <see cref="SieveReplicaApplication"/> before that execution's outputs leave it. Immutable,
/// so a reader never waits for execution and never sees half of one. A reader that registers for live outputs
/// and then reads this model misses nothing: an item not yet in the model it read is in outputs handed out
/// after the read.
/// </summary>
public sealed class SieveReadModel
{
    public static readonly SieveReadModel Empty = new();

    /// <summary>Executions and snapshot restores published so far: a version number, growing by one per publication.</summary>
    public long Version { get; init; }

    /// <summary>Times the agreed state was replaced by a snapshot (state transfer, recovery) since this replica started.</summary>
    public long Restores { get; init; }

    /// <summary>Number of rule evaluations (the reorder buffer's clock).</summary>
    public long Processed { get; init; }

    public int HeldCount { get; init; }

    /// <summary>Charged bytes of the held messages.</summary>
    public long HeldBytes { get; init; }

    public ImmutableSortedDictionary<int, ReceiverQueueView> Receivers { get; init; } = ImmutableSortedDictionary<int, ReceiverQueueView>.Empty;

    /// <summary>Pre-SQs with a record, by id.</summary>
    public ImmutableSortedDictionary<int, PreSqStanding> PreSqs { get; init; } = ImmutableSortedDictionary<int, PreSqStanding>.Empty;

    /// <summary>Senders with an assigned pre-SQ, by id (at most the senders this replica holds records for).</summary>
    public ImmutableSortedDictionary<int, SenderAssignment> Assignments { get; init; } = ImmutableSortedDictionary<int, SenderAssignment>.Empty;

    /// <summary>Senders past their quarantine threshold, by id.</summary>
    public ImmutableSortedSet<int> QuarantinedSenders { get; init; } = [];

    /// <summary>Null when the rules cannot be replaced through the ordering (fixed routes).</summary>
    public RuleSetStanding? RuleSets { get; init; }

    public long RuleSetCommandsApplied { get; init; }

    public long RuleSetCommandsRefused { get; init; }

    /// <summary>Senders quarantined by an administrator command until readmitted (agreed state).</summary>
    public ImmutableSortedSet<int> AdminQuarantinedSenders { get; init; } = [];

    /// <summary>Pre-SQs quarantined by an administrator command until readmitted (agreed state).</summary>
    public ImmutableSortedSet<int> AdminQuarantinedPreSqs { get; init; } = [];

    /// <summary>Enrolment changes applied through the ordering (agreed).</summary>
    public long EnrolmentVersion { get; init; }

    /// <summary>Entries of the enrolment-change table (enrolled and revoked ids; agreed, bounded by maxEnrolmentChanges).</summary>
    public int EnrolmentEntries { get; init; }

    /// <summary>Entries of the id lease table (held or expired but still guarding against replays; agreed, at most <see cref="IdLeaseTable.MaxEntries"/>).</summary>
    public int IdLeaseEntries { get; init; }

    /// <summary>The highest administrator-command nonce applied (agreed state): the next command must carry a higher one.</summary>
    public long AdminLastNonce { get; init; }

    public long AdminCommandsApplied { get; init; }

    public long AdminCommandsRefused { get; init; }

    /// <summary>Local drop counts; thread-safe live counters, not part of the published version.</summary>
    public DropCounters? Drops { get; init; }

    /// <summary>Local denial counts by rule; thread-safe live counters, not part of the published version.</summary>
    public RuleDenialCounters? RuleDenials { get; init; }

    public ReceiverQueueView Queue(int receiver) => Receivers.GetValueOrDefault(receiver) ?? ReceiverQueueView.Empty;

    public int QueueLength(int receiver) => Queue(receiver).Count;

    /// <summary>Charged bytes queued for the receiver and reserved by messages held for it.</summary>
    public long QueueBytes(int receiver) => Queue(receiver).OccupancyBytes;

    public long PreSqSuspicion(int preSq) => PreSqs.GetValueOrDefault(preSq).Suspicion;

    /// <summary>Quarantined by its suspicion counter or by an administrator.</summary>
    public bool IsPreSqQuarantined(int preSq) => PreSqs.GetValueOrDefault(preSq).Quarantined || AdminQuarantinedPreSqs.Contains(preSq);

    /// <summary>Quarantined by its suspicion counter or by an administrator.</summary>
    public bool IsSenderQuarantined(int sender) => QuarantinedSenders.Contains(sender) || AdminQuarantinedSenders.Contains(sender);

    /// <summary>
    /// Unacknowledged messages for a receiver, as one batch to re-send (with bodies) when the receiver
    /// reconnects or its acknowledgements stall. Batch number 0 marks a retransmission.
    /// </summary>
    public OutboxBatch? PendingFor(int receiver, int maxItems)
    {
        var q = Queue(receiver);
        return q.Count == 0 ? null : new OutboxBatch(receiver, 0, q.Pending().Take(maxItems).ToList());
    }

    /// <summary>The queued bodies an authenticated fetch asks for (unknown or mismatching items left out).</summary>
    public List<FetchedBody> FindBodies(BodyFetchRequest req)
    {
        ArgumentNullException.ThrowIfNull(req);
        var found = new List<FetchedBody>();
        var q = Queue(req.Receiver);
        foreach (var w in req.Items)
        {
            if (q.TryGet(w.Sender, w.RouteSeq, out var item) && item!.DataDigest == w.DataDigest)
            {
                found.Add(new FetchedBody(item.Sender, item.RouteSeq, item.SenderSeq, item.Data));
            }
        }
        return found;
    }
}
