using SieveQ.Agent.Services;
using SieveQ.Protocol.V1;
using SieveQ.Sdk.Sender;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Sdk.Tests;

/// <summary>The agent's progress stream: outcomes listed as they end, bounded, and the stream's end only once all is settled.</summary>
public class SendProgressReporterTests
{
    private readonly List<SendProgress> _written = [];
    private long _acknowledged;
    private long _acknowledgedReads;

    private SendProgressReporter Reporter() => new((p, _) =>
    {
        lock (_written)
        {
            _written.Add(p.Clone());
        }
        return Task.CompletedTask;
    }, () =>
    {
        Interlocked.Increment(ref _acknowledgedReads);
        return Volatile.Read(ref _acknowledged);
    });

    [Fact]
    public async Task A_rejection_is_listed_with_its_rule_and_a_delivery_is_counted()
    {
        var reporter = Reporter();
        reporter.Accepted(11);
        reporter.Accepted(12);
        reporter.Ended(1, new MessageOutcome(11, 100, MessageOutcomeKind.Delivered));
        reporter.Ended(2, new MessageOutcome(12, 100, MessageOutcomeKind.Rejected, RejectionReason.RuleDenied, "no payments after 22:00"));
        Volatile.Write(ref _acknowledged, 12);
        await reporter.RunAsync(Task.CompletedTask, CancellationToken.None);

        var last = _written[^1];
        Assert.Equal((2L, 12L, 12L, 1L, 0L), (last.Accepted, last.LastSeq, last.Acknowledged, last.Delivered, last.Refused));
        var rejected = Assert.Single(_written.SelectMany(p => p.Outcomes));
        Assert.Equal((2L, 12L, 100, SendOutcomeKind.Rejected, "RuleDenied", "no payments after 22:00"),
            (rejected.Index, rejected.Seq, rejected.Receiver, rejected.Kind, rejected.Reason, rejected.Detail));
    }

    [Fact]
    public async Task The_stream_ends_only_when_every_accepted_message_has_its_outcome()
    {
        var reporter = Reporter();
        reporter.Accepted(1);
        Volatile.Write(ref _acknowledged, 1);
        using var cts = new CancellationTokenSource();
        var run = Task.Run(() => reporter.RunAsync(Task.CompletedTask, cts.Token));
        // Acknowledged, but the outcome has not been handed over yet: the stream must not end, and while it waits it
        // polls (every 20 ms), it does not spin (a spinning reporter reads the acknowledgement millions of times).
        await Task.WhenAny(run, Task.Delay(300));
        Assert.False(run.IsCompleted);
        Assert.InRange(Interlocked.Read(ref _acknowledgedReads), 1, 1_000);

        reporter.Ended(1, new MessageOutcome(1, 100, MessageOutcomeKind.TimedOut));
        await run.WaitAsync(TimeSpan.FromSeconds(10));
        var timedOut = Assert.Single(_written.SelectMany(p => p.Outcomes));
        Assert.Equal(SendOutcomeKind.TimedOut, timedOut.Kind);
    }

    [Fact]
    public async Task A_message_accepted_as_the_input_ends_is_waited_for()
    {
        // The last message is accepted and the input completes while the reporter writes figures taken just before:
        // those figures say "all settled", but the stream must not end without the new message's outcome.
        var input = new TaskCompletionSource();
        SendProgressReporter? reporter = null;
        var writes = 0;
        reporter = new SendProgressReporter((p, _) =>
        {
            lock (_written)
            {
                _written.Add(p.Clone());
            }
            if (Interlocked.Increment(ref writes) == 1)
            {
                reporter!.Accepted(1);
                input.SetResult();
            }
            return Task.CompletedTask;
        }, () => Volatile.Read(ref _acknowledged));
        using var cts = new CancellationTokenSource();
        var run = Task.Run(() => reporter.RunAsync(input.Task, cts.Token));
        await Task.WhenAny(run, Task.Delay(300));
        Assert.False(run.IsCompleted, "the stream ended before the message accepted last had its outcome");

        reporter.Ended(1, new MessageOutcome(1, 100, MessageOutcomeKind.Rejected, RejectionReason.RuleDenied, "evil"));
        Volatile.Write(ref _acknowledged, 1);
        await run.WaitAsync(TimeSpan.FromSeconds(10));
        Assert.Equal(SendOutcomeKind.Rejected, Assert.Single(_written.SelectMany(p => p.Outcomes)).Kind);
    }

    [Fact]
    public async Task Outcomes_beyond_the_bound_are_counted_not_kept_and_written_in_bounded_pieces()
    {
        var reporter = Reporter();
        var extra = 10;
        for (var i = 1; i <= SendProgressReporter.MaxListed + extra; i++)
        {
            reporter.Refused(i, new SendRefusedException(SendRefusal.NoRoute, 1, 555, "no route from sender 1 to receiver 555"));
        }
        await reporter.RunAsync(Task.CompletedTask, CancellationToken.None);

        Assert.All(_written, p => Assert.True(p.Outcomes.Count <= SendProgressReporter.MaxPerProgress));
        var listed = _written.SelectMany(p => p.Outcomes).ToList();
        Assert.Equal(SendProgressReporter.MaxListed, listed.Count);
        Assert.Equal(Enumerable.Range(1, SendProgressReporter.MaxListed).Select(i => (long)i), listed.Select(o => o.Index));
        var last = _written[^1];
        Assert.Equal(SendProgressReporter.MaxListed + extra, last.Refused);
        Assert.Equal(extra, last.OutcomesNotListed);
    }
}
