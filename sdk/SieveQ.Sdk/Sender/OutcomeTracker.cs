using System.Diagnostics;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Sender;

namespace SieveQ.Sdk.Sender;

/// <summary>
/// The outcome of every message this run numbered, until f+1 replicas' verdict or the outcome timeout. Owned by the
/// sender's pump (not thread-safe). Numbers and deadlines both grow in numbering order, so one queue serves both:
/// verdicts settle its front, as do deadlines. Bounded by the outstanding window plus what timed out and is not yet
/// acknowledged; entries that timed out are dropped at once.
/// </summary>
internal sealed class OutcomeTracker
{
    private readonly Queue<Entry> _waiting = new();
    private readonly long _timeoutMs;

    public OutcomeTracker(TimeSpan timeout)
    {
        _timeoutMs = timeout == Timeout.InfiniteTimeSpan ? long.MaxValue / 4 : (long)Math.Ceiling(timeout.TotalMilliseconds);
    }

    public int Count => _waiting.Count;

    public long? NextDeadlineMs => _waiting.TryPeek(out var e) ? e.DeadlineMs : null;

    public Task<MessageOutcome> Track(long seq, int receiver, long nowMs)
    {
        var tcs = new TaskCompletionSource<MessageOutcome>(TaskCreationOptions.RunContinuationsAsynchronously);
        _waiting.Enqueue(new Entry(seq, receiver, nowMs + _timeoutMs, Stopwatch.GetTimestamp(), tcs));
        return tcs.Task;
    }

    /// <summary>From numbering to f+1 replicas' verdict, for each message settled by a verdict.</summary>
    public LatencyWindow VerdictLatency { get; } = new();

    /// <summary>
    /// Settles every tracked message the statement acknowledged, handing each outcome to <paramref name="record"/> before
    /// its awaiter sees it (so counters are current when an outcome completes). Returns the rejections of numbers this run
    /// did not track (an earlier run's messages sent again from the outbox, or messages that timed out).
    /// </summary>
    public IReadOnlyList<MessageRejection> Settle(AcknowledgedVerdicts verdicts, Action<MessageOutcome> record, long nowMs)
    {
        var rejected = verdicts.Rejections.ToDictionary(j => j.Seq);
        while (_waiting.TryPeek(out var e) && e.Seq <= verdicts.UpTo)
        {
            _waiting.Dequeue();
            rejected.Remove(e.Seq, out var j);
            var o = j is not null ? new MessageOutcome(e.Seq, e.Receiver, MessageOutcomeKind.Rejected, j.Reason, j.Rule)
                : e.Seq >= verdicts.VerdictsFrom ? new MessageOutcome(e.Seq, e.Receiver, MessageOutcomeKind.Delivered)
                : new MessageOutcome(e.Seq, e.Receiver, MessageOutcomeKind.VerdictUnknown);
            if (o.Kind != MessageOutcomeKind.VerdictUnknown)
            {
                VerdictLatency.Record(Stopwatch.GetElapsedTime(e.NumberedAt), nowMs);
            }
            record(o);
            e.Completion.TrySetResult(o);
        }
        return rejected.Values.OrderBy(j => j.Seq).ToList();
    }

    /// <summary>Ends, as timed out, every tracked message whose deadline passed, handing each to <paramref name="record"/> first.</summary>
    public void Expire(long nowMs, Action<MessageOutcome> record)
    {
        while (_waiting.TryPeek(out var e) && e.DeadlineMs <= nowMs)
        {
            _waiting.Dequeue();
            var o = new MessageOutcome(e.Seq, e.Receiver, MessageOutcomeKind.TimedOut);
            record(o);
            e.Completion.TrySetResult(o);
        }
    }

    public void FailAll(Exception e)
    {
        while (_waiting.TryDequeue(out var entry))
        {
            entry.Completion.TrySetException(e);
        }
    }

    private readonly record struct Entry(long Seq, int Receiver, long DeadlineMs, long NumberedAt, TaskCompletionSource<MessageOutcome> Completion);
}
