using System.Collections.Immutable;

namespace SieveQ.Sieve.Replica;

public sealed partial class SieveReplicaApplication
{
    // Senders quarantined at some point since start or the last restore (local bookkeeping, not agreed state).
    private readonly HashSet<int> _quarantineCandidates = [];

    // Each sender's assignment as last published: changed one entry at a time when an ACKREQ moves or measures a
    // sender, so publishing after every execution does not walk every sender record.
    private ImmutableSortedDictionary<int, SenderAssignment> _assignments = ImmutableSortedDictionary<int, SenderAssignment>.Empty;

    /// <summary>Takes the sender's assignment into the next read model if it changed.</summary>
    private void NoteAssignment(int sender, SenderRecord s)
    {
        if (s.AssignedPreSq < 0)
        {
            return;
        }
        var current = new SenderAssignment(s.AssignedPreSq, s.LastLossPpm);
        if (!_assignments.TryGetValue(sender, out var published) || published != current)
        {
            _assignments = _assignments.SetItem(sender, current);
        }
    }

    /// <summary>After a snapshot replaced the sender records.</summary>
    private void RebuildAssignments()
    {
        var b = ImmutableSortedDictionary.CreateBuilder<int, SenderAssignment>();
        foreach (var (id, s) in _senders)
        {
            if (s.AssignedPreSq >= 0)
            {
                b.Add(id, new SenderAssignment(s.AssignedPreSq, s.LastLossPpm));
            }
        }
        _assignments = b.ToImmutable();
    }

    /// <summary>
    /// Takes the read model from the state as it stands (execution thread) and swaps it in. Receiver queues
    /// are persistent collections, so an unchanged queue keeps its view and a changed one costs one small
    /// object; the suspicion standings are recomputed because they decay with the agreed time, by peeking:
    /// publishing must leave agreed state exactly as execution left it.
    /// </summary>
    private void PublishReadModel(bool rebuildQueues = false)
    {
        var previous = _readModel;
        var queues = rebuildQueues ? ImmutableSortedDictionary<int, ReceiverQueueView>.Empty.ToBuilder() : previous.Receivers.ToBuilder();
        foreach (var (id, q) in _receivers)
        {
            var view = q.View;
            if (!queues.TryGetValue(id, out var published) || !ReferenceEquals(published, view))
            {
                queues[id] = view;
            }
        }
        if (queues.Count > _receivers.Count)
        {
            // A revoked receiver's queue is gone from agreed state; its view goes too.
            queues.RemoveRange([.. queues.Keys.Where(id => !_receivers.ContainsKey(id))]);
        }
        var preSqs = ImmutableSortedDictionary.CreateBuilder<int, PreSqStanding>();
        foreach (var (id, p) in _preSqs)
        {
            var (suspicion, quarantinedPreSq) = p.Suspicion.Peek(_now, _options.PreSqSuspicion);
            preSqs.Add(id, new PreSqStanding(suspicion, quarantinedPreSq));
        }
        // Only senders ever quarantined can be now: looking at every sender after every execution would cost
        // the execution thread time in proportion to the enrolment.
        var quarantined = ImmutableSortedSet.CreateBuilder<int>();
        foreach (var id in _quarantineCandidates)
        {
            if (_senders.TryGetValue(id, out var s) && s.Suspicion.Peek(_now, _options.SenderSuspicion).Quarantined)
            {
                quarantined.Add(id);
            }
        }
        Volatile.Write(ref _readModel, new SieveReadModel
        {
            Version = previous.Version + 1,
            Restores = _restores,
            Processed = _processed,
            HeldCount = _reorder.Count,
            HeldBytes = _reorder.Bytes,
            Receivers = queues.ToImmutable(),
            PreSqs = preSqs.ToImmutable(),
            Assignments = _assignments,
            QuarantinedSenders = quarantined.ToImmutable(),
            RuleSets = _ruleSets?.Standing,
            RuleSetCommandsApplied = _ruleSetCommandsApplied,
            RuleSetCommandsRefused = _ruleSetCommandsRefused,
            AdminQuarantinedSenders = previous.AdminQuarantinedSenders.SetEquals(_admin.QuarantinedSenders) ? previous.AdminQuarantinedSenders : [.. _admin.QuarantinedSenders],
            AdminQuarantinedPreSqs = previous.AdminQuarantinedPreSqs.SetEquals(_admin.QuarantinedPreSqs) ? previous.AdminQuarantinedPreSqs : [.. _admin.QuarantinedPreSqs],
            AdminLastNonce = _admin.LastNonce,
            EnrolmentVersion = _enrolment.Version,
            EnrolmentEntries = _enrolment.Entries.Count,
            IdLeaseEntries = _leases.Entries.Count,
            AdminCommandsApplied = _adminCommandsApplied,
            AdminCommandsRefused = _adminCommandsRefused,
            Drops = _drops,
            RuleDenials = _ruleDenials,
        });
    }
}
