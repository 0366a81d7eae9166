using SieveQ.Sieve.Envelope;

namespace SieveQ.PreSq.Tests;

/// <summary>The one queue of agreed refusals and quarantines between the ordering completions and the pre-SQ's loop.</summary>
public sealed class AgreedOutcomeQueueTests
{
    [Fact]
    public void Outcomes_come_out_in_arrival_order_and_each_kind_is_counted_while_it_waits()
    {
        var queue = new AgreedOutcomeQueue();
        AgreedOutcome first = new AgreedOutcome.Untaken([new UntakenMessage(9, 1)]);
        AgreedOutcome second = new AgreedOutcome.Quarantines([new SenderQuarantineHold(9, 60_000)]);
        AgreedOutcome third = new AgreedOutcome.Untaken([new UntakenMessage(9, 2)]);
        queue.Post(first);
        queue.Post(second);
        queue.Post(third);
        Assert.Equal((2, 1), (queue.UntakenPending, queue.QuarantinesPending));

        Assert.True(queue.TryTake(out var a));
        Assert.Same(first, a);
        Assert.Equal((1, 1), (queue.UntakenPending, queue.QuarantinesPending));
        Assert.True(queue.TryTake(out var b));
        Assert.Same(second, b);
        Assert.Equal((1, 0), (queue.UntakenPending, queue.QuarantinesPending));
        Assert.True(queue.TryTake(out var c));
        Assert.Same(third, c);
        Assert.Equal((0, 0), (queue.UntakenPending, queue.QuarantinesPending));
        Assert.False(queue.TryTake(out _));
    }
}
