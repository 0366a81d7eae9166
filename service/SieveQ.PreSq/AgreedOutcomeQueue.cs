using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;
using SieveQ.Sieve.Envelope;

namespace SieveQ.PreSq;

/// <summary>What an agreed ordering result tells the loop to do to its filter.</summary>
internal abstract record AgreedOutcome
{
    private AgreedOutcome()
    {
    }

    /// <summary>Messages the replicas refused untaken: the filter forgets it passed them, so their retransmissions pass.</summary>
    public sealed record Untaken(IReadOnlyList<UntakenMessage> Messages) : AgreedOutcome;

    /// <summary>Senders f+1 replicas reported quarantined: the filter stops their frames at check (a).</summary>
    public sealed record Quarantines(IReadOnlyList<SenderQuarantineHold> Holds) : AgreedOutcome;
}

/// <summary>
/// The agreed outcomes waiting for the loop, in arrival order, kept apart from the inbox: an outcome skipped because
/// the inbox was full of frames would be lost for good (a refusal's messages left marked as passed, every
/// retransmission refused as a replay), so posting never fails. Bounded by construction, not by a cap: each completed
/// ordering request posts at most one outcome of each kind before it frees its slot, and only the loop issues
/// requests (at most the in-flight bound at a time), draining this queue before each item it handles, so no more than
/// two per request in flight, plus the few it submits while handling one item, can wait here. A cap would have to
/// skip (breaking the guarantee) or block the completion that holds a slot the loop may be waiting for.
/// Thread-safe: completions post, the loop takes.
/// </summary>
internal sealed class AgreedOutcomeQueue
{
    private readonly ConcurrentQueue<AgreedOutcome> _outcomes = new();
    private int _untaken;
    private int _quarantines;

    /// <summary>Refusal lists waiting (a gauge: counted before they are queued, so never below what is queued).</summary>
    public int UntakenPending => Volatile.Read(ref _untaken);

    /// <summary>Quarantine reports waiting.</summary>
    public int QuarantinesPending => Volatile.Read(ref _quarantines);

    public void Post(AgreedOutcome outcome)
    {
        ArgumentNullException.ThrowIfNull(outcome);
        Interlocked.Increment(ref PendingOf(outcome));
        _outcomes.Enqueue(outcome);
    }

    public bool TryTake([NotNullWhen(true)] out AgreedOutcome? outcome)
    {
        if (!_outcomes.TryDequeue(out outcome))
        {
            return false;
        }
        Interlocked.Decrement(ref PendingOf(outcome));
        return true;
    }

    private ref int PendingOf(AgreedOutcome outcome)
    {
        if (outcome is AgreedOutcome.Untaken)
        {
            return ref _untaken;
        }
        return ref _quarantines;
    }
}
