using System.Threading.Channels;
using SieveQ.Bft.Core;
using SieveQ.Sieve.Replica;

namespace SieveQ.ReplicaSq;

/// <summary>
/// The sieve's outputs on their way from the ordering host's core thread, which hands each execution's
/// outputs here in decision order (<see cref="IExecutionOutputSink"/>), to the one pump that renders and
/// routes them. The core thread never waits for the pump: when the bounded queue is full the outputs are
/// discarded and counted. Nothing is lost for good: approved items stay queued until acknowledged and are
/// re-sent (<see cref="Discarded"/> tells the re-sender to send everything); a lost ACKRES makes the
/// sender repeat its ACKREQ.
/// </summary>
public sealed class ExecutionOutputQueue : IExecutionOutputSink
{
    private readonly Channel<OutboxContents> _queued;
    private readonly ReplicaSqMetrics _metrics;
    private long _discarded;

    public ExecutionOutputQueue(int capacity, ReplicaSqMetrics metrics)
    {
        ArgumentNullException.ThrowIfNull(metrics);
        _metrics = metrics;
        _queued = Channel.CreateBounded<OutboxContents>(new BoundedChannelOptions(capacity)
        {
            FullMode = BoundedChannelFullMode.Wait,
            SingleReader = true,
            SingleWriter = false,
        });
    }

    public ChannelReader<OutboxContents> Reader => _queued.Reader;

    /// <summary>Executions whose outputs were discarded because the pump was behind.</summary>
    public long Discarded => Interlocked.Read(ref _discarded);

    public void Accept(long consensusId, IExecutionOutputs outputs)
    {
        if (outputs is not OutboxContents contents)
        {
            throw new ArgumentException($"the sieve's outputs are {nameof(OutboxContents)}, not {outputs?.GetType().Name}", nameof(outputs));
        }
        if (contents.Batches.Count == 0 && contents.AckResponses.Count == 0 && contents.Notices.Count == 0)
        {
            return;
        }
        if (_queued.Writer.TryWrite(contents))
        {
            return;
        }
        Interlocked.Increment(ref _discarded);
        _metrics.Drop(OutputDropReason.OutboxQueueFull, contents.Batches.Count + contents.AckResponses.Count + contents.Notices.Count);
    }

    /// <summary>Ends the queue so the pump finishes what is queued and stops.</summary>
    public void Complete() => _queued.Writer.TryComplete();
}
