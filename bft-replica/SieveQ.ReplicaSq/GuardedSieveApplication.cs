using System.Threading.Channels;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Diagnostics;
using SieveQ.Sieve.Hosting.Diagnostics;
using SieveQ.Sieve.Replica;

namespace SieveQ.ReplicaSq;

/// <summary>
/// What the replica host runs instead of the bare <see cref="SieveReplicaApplication"/>. The sieve is
/// not thread-safe, but gRPC handlers must read its queues (pending items, body fetches) while the
/// host's core thread executes; one lock serialises both. After each execution the outbox is drained
/// under that lock (its contents belong to that execution) and handed to a bounded channel for the
/// pump. The core thread never waits for the pump: a full channel discards the drained contents and
/// counts them. Nothing is lost for good: approved items stay queued until acknowledged and are
/// re-sent; a lost ACKRES makes the sender repeat its ACKREQ.
/// </summary>
public sealed class GuardedSieveApplication : IReplicatedApplication
{
    private readonly SieveReplicaApplication _inner;
    private readonly Lock _gate = new();
    private readonly Channel<OutboxContents> _drained;
    private readonly ReplicaSqMetrics _metrics;
    private long _restores;
    private long _discardedOutboxes;

    public GuardedSieveApplication(SieveReplicaApplication inner, int queueCapacity, ReplicaSqMetrics metrics)
    {
        ArgumentNullException.ThrowIfNull(inner);
        ArgumentNullException.ThrowIfNull(metrics);
        _inner = inner;
        _metrics = metrics;
        _drained = Channel.CreateBounded<OutboxContents>(new BoundedChannelOptions(queueCapacity)
        {
            FullMode = BoundedChannelFullMode.Wait,
            SingleReader = true,
            SingleWriter = false,
        });
    }

    public ChannelReader<OutboxContents> Drained => _drained.Reader;

    /// <summary>
    /// Grows when the agreed state jumped (state transfer) or drained outputs were discarded: either way
    /// some approved items were never streamed live, so everything pending is due for re-sending.
    /// </summary>
    public long ResyncGeneration => Interlocked.Read(ref _restores) + Interlocked.Read(ref _discardedOutboxes);

    public IReadOnlyList<byte[]> Execute(DecisionContext context, IReadOnlyList<ClientRequest> requests)
    {
        ArgumentNullException.ThrowIfNull(requests);
        if (StageTrace.Enabled)
        {
            foreach (var r in requests)
            {
                StageTrace.MarkOrderingPayload(StageNames.ReplicaExecuted, r.Payload);
            }
        }
        IReadOnlyList<byte[]> results;
        OutboxContents drained;
        lock (_gate)
        {
            results = _inner.Execute(context, requests);
            drained = _inner.Outbox.Drain();
        }
        Hand(drained);
        return results;
    }

    public byte[] TakeSnapshot()
    {
        lock (_gate)
        {
            return _inner.TakeSnapshot();
        }
    }

    public void RestoreSnapshot(ReadOnlySpan<byte> snapshot)
    {
        lock (_gate)
        {
            _inner.RestoreSnapshot(snapshot);
            // Outputs of executions the snapshot replaced describe a state that no longer exists.
            _inner.Outbox.Drain();
        }
        Interlocked.Increment(ref _restores);
    }

    /// <summary>Reads the sieve's state from any thread, never while it executes.</summary>
    public T Read<T>(Func<SieveReplicaApplication, T> read)
    {
        ArgumentNullException.ThrowIfNull(read);
        lock (_gate)
        {
            return read(_inner);
        }
    }

    /// <summary>Ends the channel so the pump finishes what is queued and stops.</summary>
    public void Complete() => _drained.Writer.TryComplete();

    private void Hand(OutboxContents drained)
    {
        if (drained.Batches.Count == 0 && drained.AckResponses.Count == 0 && drained.Notices.Count == 0)
        {
            return;
        }
        if (_drained.Writer.TryWrite(drained))
        {
            return;
        }
        Interlocked.Increment(ref _discardedOutboxes);
        _metrics.Drop(OutputDropReason.OutboxQueueFull, drained.Batches.Count + drained.AckResponses.Count + drained.Notices.Count);
    }
}
