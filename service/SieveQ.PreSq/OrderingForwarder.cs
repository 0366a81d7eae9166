using System.Diagnostics;
using SieveQ.Bft.Hosting.Client;
using SieveQ.Sieve.Envelope;

namespace SieveQ.PreSq;

/// <summary>
/// Hands closed batches to the ordering service with a bounded number in flight. The event loop takes a
/// slot before it submits; when none is free it waits, and while it waits it reads nothing, so the
/// back-pressure of the replicas reaches the inbound queue (which then sheds) instead of growing memory.
/// Each result, <c>0x11 | accepted | held | dropped</c>, is agreed by f+1 replicas and only counted:
/// items the replicas did not take are the senders' to retransmit. Those the result names as refused untaken, and all
/// sender messages of a request whose number a restart reused (<see cref="OrderingSequenceReservation.ReusedUpTo"/>),
/// are handed to <see cref="Untaken"/> so the filter lets their retransmissions through.
/// </summary>
internal sealed class OrderingForwarder : IAsyncDisposable
{
    public const string SourceName = "SieveQ.PreSq";

    /// <summary>One span per batch from submission to f+1 agreed replies; unlistened (no OTLP export) it costs a null check.</summary>
    private static readonly ActivitySource Source = new(SourceName, "1.0");

    private readonly BftClient _client;
    private readonly OrderingSequenceReservation _sequences;
    private readonly PreSqMetrics _metrics;
    private readonly SemaphoreSlim _slots;
    private readonly CancellationTokenSource _stop = new();
    private int _pending;
    private long _nextTicket;
    /// <summary>When each request in flight was submitted (at most the in-flight bound of entries).</summary>
    private readonly System.Collections.Concurrent.ConcurrentDictionary<long, long> _submittedAt = new();
    private readonly TaskCompletionSource _drained = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public OrderingForwarder(BftClient client, OrderingSequenceReservation sequences, int maxInFlight, PreSqMetrics metrics)
    {
        _client = client;
        _sequences = sequences;
        _metrics = metrics;
        _maxInFlight = maxInFlight;
        _slots = new SemaphoreSlim(maxInFlight, maxInFlight);
    }

    private readonly int _maxInFlight;

    /// <summary>
    /// Before the first batch: spends the request numbers a restart reuses (above <see cref="OrderingSequenceReservation.FirstSequence"/>,
    /// up to <see cref="OrderingSequenceReservation.ReusedUpTo"/>) on enrolment queries, which change nothing. A reused number the
    /// previous run had used is answered at once with its old reply; one it had not is filled, so no gap is left. Every slot is
    /// held meanwhile, so no batch, rule-set command or enrolment poll takes a reused number: a batch that did would be answered
    /// with the previous run's result and its senders would have to retransmit (seconds of refused traffic after every restart).
    /// </summary>
    public void Start()
    {
        var reused = _sequences.ReusedUpTo - _sequences.FirstSequence;
        if (reused <= 0)
        {
            return;
        }
        for (var i = 0; i < _maxInFlight; i++)
        {
            _slots.Wait(0);
        }
        // PreSqMetrics.ReusedNumbersSpent counts them as they are spent.
        _ = UseUpReusedNumbersAsync(reused);
    }

    private async Task UseUpReusedNumbersAsync(long reused)
    {
        try
        {
            var query = OrderingRequestCodec.Encode(_metrics.PreSqId, [EnrolmentViewCodec.EncodeQuery(0, 0)]);
            var spent = new List<Task>((int)reused);
            for (long n = 0; n < reused; n++)
            {
                _sequences.Take();
                // The client's own window (the in-flight bound) admits them; the replies are not read.
                spent.Add(_client.SubmitAsync(query, _stop.Token));
            }
            foreach (var done in spent)
            {
                await done.ConfigureAwait(false);
                _metrics.ReusedNumberSpent();
            }
        }
        catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException)
        {
            // Stopping before the replicas answered: the next start reuses the same block again.
        }
        catch (Exception)
        {
            // Anything else: nothing awaits this task, so it must not fault unobserved. The slots are released below
            // and batches go on; a batch that takes a reused number left unspent has its messages handed back by
            // CompleteAsync (Untaken), as for any reused number.
        }
        finally
        {
            _slots.Release(_maxInFlight);
        }
    }

    public int ConnectedReplicas => _client.ConnectedReplicas;

    /// <summary>Requests submitted and not yet completed.</summary>
    public int InFlight => Volatile.Read(ref _pending);

    /// <summary>How long the oldest request in flight has waited for f+1 replies, or zero with none in flight.</summary>
    public TimeSpan OldestUnanswered
    {
        get
        {
            var now = Environment.TickCount64;
            var oldest = now;
            foreach (var at in _submittedAt.Values)
            {
                oldest = Math.Min(oldest, at);
            }
            return TimeSpan.FromMilliseconds(now - oldest);
        }
    }

    public bool TryTakeSlot() => _slots.Wait(0);

    public Task TakeSlotAsync(CancellationToken ct) => _slots.WaitAsync(ct);

    /// <summary>Submits one ordering-request payload; the caller holds a slot, released when the request completes.</summary>
    public void Submit(byte[] payload, int items)
    {
        // Each submission takes the client's next request number, so counting them here bounds the highest used.
        _sequences.Take();
        Interlocked.Increment(ref _pending);
        _metrics.BatchSubmitted(items);
        var ticket = Interlocked.Increment(ref _nextTicket);
        _submittedAt[ticket] = Environment.TickCount64;
        _ = CompleteAsync(payload, items, ticket);
    }

    /// <summary>
    /// Submits an ordering request that carries one rule-set command and returns the result bytes f+1
    /// replicas agreed on. It takes an in-flight slot like a batch, so commands never overtake the
    /// back-pressure; cancelling only stops the wait (the request may still be executed).
    /// </summary>
    public async Task<byte[]> SubmitCommandAsync(byte[] payload, CancellationToken ct)
    {
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(ct, _stop.Token);
        await _slots.WaitAsync(linked.Token).ConfigureAwait(false);
        try
        {
            _sequences.Take();
            var done = await _client.SubmitAsync(payload, linked.Token).ConfigureAwait(false);
            return done.Result;
        }
        finally
        {
            _slots.Release();
        }
    }

    /// <summary>Told, for each ordered request, which of its messages the replicas refused untaken.</summary>
    public Action<IReadOnlyList<UntakenMessage>>? Untaken { get; set; }

    /// <summary>Receives the senders an agreed result reports quarantined (<see cref="ExecuteResult.Quarantined"/>).</summary>
    public Action<IReadOnlyList<SenderQuarantineHold>>? Quarantined { get; set; }

    private async Task CompleteAsync(byte[] payload, int items, long ticket)
    {
        // A root span: the frames' senders' spans are in other processes and the signed frames carry no trace context (docs/telemetry.md).
        using var span = Source.StartActivity("pre-sq order batch", ActivityKind.Client);
        span?.SetTag("sieveq.pre_sq", _metrics.PreSqId);
        span?.SetTag("sieveq.items", items);
        try
        {
            var done = await _client.SubmitAsync(payload, _stop.Token).ConfigureAwait(false);
            ExecuteResult? result;
            try
            {
                result = ExecuteResultCodec.Decode(done.Result);
            }
            catch (MalformedEnvelopeException)
            {
                // f+1 replicas agreed on bytes that are not a result: a replica-side bug, counted.
                result = null;
            }
            _metrics.BatchOrdered(result, done.CompletedAt - done.SubmittedAt);
            if (span is not null && result is not null)
            {
                span.SetTag("sieveq.accepted", result.Accepted);
                span.SetTag("sieveq.held", result.Held);
                span.SetTag("sieveq.dropped", result.Dropped);
            }
            else
            {
                span?.SetStatus(ActivityStatusCode.Error, "malformed result");
            }
            IReadOnlyList<UntakenMessage> refused = result?.Untaken ?? [];
            if (done.Sequence <= _sequences.ReusedUpTo)
            {
                // Possibly the previous run's reply: this request's messages may never have been ordered, and if they stayed
                // marked in this pre-SQ's window their retransmissions would be refused here as replays for ever, stalling
                // their senders at the replicas' reorder buffer.
                _metrics.ReusedNumberAnswered();
                refused = [.. refused, .. OrderingPayloadMessages.Of(payload)];
            }
            if (refused.Count > 0 && Untaken is { } untaken)
            {
                untaken(refused);
            }
            if (result is { Quarantined.Count: > 0 } && Quarantined is { } quarantined)
            {
                quarantined(result.Quarantined);
            }
        }
        catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException or ArgumentOutOfRangeException)
        {
            // Shutting down (or, never with a cluster the start check admitted, a batch above the cluster's
            // request bound): the senders retransmit through whichever pre-SQ serves them next.
            _metrics.BatchAbandoned();
            span?.SetStatus(ActivityStatusCode.Error, "abandoned");
        }
        finally
        {
            _submittedAt.TryRemove(ticket, out _);
            _slots.Release();
            if (Interlocked.Decrement(ref _pending) == 0 && _stop.IsCancellationRequested)
            {
                _drained.TrySetResult();
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        if (Volatile.Read(ref _pending) == 0)
        {
            _drained.TrySetResult();
        }
        await _client.DisposeAsync().ConfigureAwait(false);
        // Disposing the client cancels every waiting submission, so this is quick.
        await Task.WhenAny(_drained.Task, Task.Delay(TimeSpan.FromSeconds(5))).ConfigureAwait(false);
        _sequences.Dispose();
    }
}
