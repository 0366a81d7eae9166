using System.Buffers.Binary;
using System.Threading.Channels;
using SieveQ.Sieve.Diagnostics;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Hosting.Diagnostics;
using SieveQ.Sieve.PreSq;
using SieveQ.Transport;

namespace SieveQ.PreSq;

/// <summary>One unit of work for the loop: a sender frame (with the stream it came on), a checked receiver ack, or a change to the filter.</summary>
internal readonly record struct InboundItem(ReadOnlyMemory<byte> Bytes, SenderStream? From, Action<PreSqFilter>? Control);

/// <summary>
/// The pre-SQ's event loop: the only code that touches the filter, the load monitor and the batcher
/// (none of them thread-safe). Network tasks post into a bounded queue and never wait on it: when the
/// loop falls behind, new input is shed and counted, and senders retransmit. One loop rather than one
/// per shard of senders because the checks are cheap next to everything around them: on one core the
/// filter and batcher take over ten times the pre-SQ's target rate, more than the ordering behind it
/// takes (docs/design-figures.md). One loop also
/// keeps batches as full as the load allows, and keeps each sender's frames in arrival order.
/// </summary>
internal sealed class SieveLoop : IAsyncDisposable
{
    private readonly PreSqFilter _filter;
    private readonly OrderingBatcher _batcher;
    private readonly PreSqLoadMonitor _monitor;
    private readonly OrderingForwarder _forwarder;
    private readonly SenderStreams _streams;
    private readonly PreSqMetrics _metrics;
    private readonly Channel<InboundItem> _inbox;
    private readonly IPassedMessageStage? _passed;
    private readonly Dictionary<int, long> _bindingNonces = [];
    private readonly CancellationTokenSource _stop = new();
    private Task _run = Task.CompletedTask;

    public SieveLoop(PreSqFilter filter, OrderingBatcher batcher, PreSqLoadMonitor monitor, OrderingForwarder forwarder,
        SenderStreams streams, PreSqMetrics metrics, int queueItems, IPassedMessageStage? passed = null)
    {
        _passed = passed;
        _filter = filter;
        _batcher = batcher;
        _monitor = monitor;
        _forwarder = forwarder;
        _streams = streams;
        _metrics = metrics;
        _inbox = Channel.CreateBounded<InboundItem>(new BoundedChannelOptions(queueItems)
        {
            SingleReader = true,
            FullMode = BoundedChannelFullMode.Wait,
        });
    }

    public int Backlog => _inbox.Reader.Count;

    public void Start() => _run = Task.Run(() => RunAsync(_stop.Token));

    /// <summary>Completes when the loop ends; faulted if it crashed.</summary>
    public Task Completion => _run;

    public bool TryPostFrame(ReadOnlyMemory<byte> frame, SenderStream from)
    {
        _metrics.FrameReceived();
        if (_inbox.Writer.TryWrite(new InboundItem(frame, from, null)))
        {
            return true;
        }
        _metrics.FrameShed();
        return false;
    }

    /// <summary>Queues a receiver acknowledgement whose signature was already checked; false when the queue is full.</summary>
    public bool TryPostReceiverAck(ReadOnlyMemory<byte> ack) => _inbox.Writer.TryWrite(new InboundItem(ack, null, null));

    /// <summary>
    /// Runs <paramref name="change"/> on the loop (grants, quarantine: the filter is never touched elsewhere) without
    /// waiting for it; false when the inbox is full and it was skipped.
    /// </summary>
    public bool TryPostToLoop(Action<PreSqFilter> change) => _inbox.Writer.TryWrite(new InboundItem(default, null, change));

    /// <summary>Agreed refusals and quarantines, kept apart from the inbox so that none is ever skipped.</summary>
    private readonly AgreedOutcomeQueue _agreed = new();

    /// <summary>Refusals waiting for the loop (a gauge: at most the ordering requests in flight).</summary>
    public int UntakenPending => _agreed.UntakenPending;

    /// <summary>Quarantine reports waiting for the loop; bounded as refusals are.</summary>
    public int QuarantinesPending => _agreed.QuarantinesPending;

    /// <summary>Hands the loop the messages an agreed result refused untaken; never skipped.</summary>
    public void PostUntaken(IReadOnlyList<UntakenMessage> messages) => Post(new AgreedOutcome.Untaken(messages));

    /// <summary>Hands the loop the quarantines an agreed result reported; never skipped.</summary>
    public void PostQuarantines(IReadOnlyList<SenderQuarantineHold> holds) => Post(new AgreedOutcome.Quarantines(holds));

    private void Post(AgreedOutcome outcome)
    {
        _agreed.Post(outcome);
        // Wakes the loop; when the inbox is full the loop is awake anyway and applies it before its next item.
        _inbox.Writer.TryWrite(new InboundItem(default, null, static _ => { }));
    }

    private void ApplyAgreed()
    {
        while (_agreed.TryTake(out var outcome))
        {
            switch (outcome)
            {
                case AgreedOutcome.Untaken untaken:
                    _filter.Untaken(untaken.Messages);
                    break;
                case AgreedOutcome.Quarantines quarantines:
                    _filter.FollowQuarantines(quarantines.Holds, NowMs);
                    break;
            }
        }
    }

    public async Task RunOnLoopAsync(Action<PreSqFilter> change, CancellationToken ct = default)
    {
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await _inbox.Writer.WriteAsync(new InboundItem(default, null, f =>
        {
            try
            {
                change(f);
                done.SetResult();
            }
#pragma warning disable CA1031 // the caller gets the exception; the loop must go on
            catch (Exception e)
#pragma warning restore CA1031
            {
                done.SetException(e);
            }
        }), ct).ConfigureAwait(false);
        await done.Task.WaitAsync(ct).ConfigureAwait(false);
    }

    private async Task RunAsync(CancellationToken ct)
    {
        var reader = _inbox.Reader;
        try
        {
            while (true)
            {
                ApplyAgreed();
                while (reader.TryRead(out var item))
                {
                    ApplyAgreed();
                    await HandleAsync(item, ct).ConfigureAwait(false);
                    // Under steady load the queue may never run dry: the delay bound is checked per item too.
                    await ForwardAsync(_batcher.Poll(NowMs), ct).ConfigureAwait(false);
                }
                await ForwardAsync(_batcher.Poll(NowMs), ct).ConfigureAwait(false);
                if (_batcher.Count > 0 && _forwarder.InFlight == 0)
                {
                    // Nagle's rule: with nothing of ours being ordered, waiting only adds latency; while
                    // requests are in flight the batch keeps filling until one completes or the delay is up,
                    // so batches grow with load on their own.
                    await ForwardAsync(_batcher.Flush(), ct).ConfigureAwait(false);
                    continue;
                }
                if (_batcher.Deadline is not { } deadline)
                {
                    if (!await reader.WaitToReadAsync(ct).ConfigureAwait(false))
                    {
                        return;
                    }
                    continue;
                }
                var wait = deadline - NowMs;
                if (wait > 0)
                {
                    var readable = reader.WaitToReadAsync(ct);
                    if (!readable.IsCompleted)
                    {
                        await Task.WhenAny(readable.AsTask(), Task.Delay(TimeSpan.FromMilliseconds(wait), ct)).ConfigureAwait(false);
                    }
                }
            }
        }
        catch (OperationCanceledException) when (ct.IsCancellationRequested)
        {
            // stopping
        }
    }

    private async ValueTask HandleAsync(InboundItem item, CancellationToken ct)
    {
        if (item.Control is { } control)
        {
            control(_filter);
            return;
        }
        var nowMs = NowMs;
        if (item.From is not { } stream)
        {
            await AddAsync(item.Bytes.Span, nowMs, ct).ConfigureAwait(false);
            return;
        }
        if (_monitor.OnArrival(NowUs) is { } warning)
        {
            _metrics.WarnRequest();
            await AddAsync(warning, nowMs, ct).ConfigureAwait(false);
        }
        var verdict = _filter.Inspect(item.Bytes, nowMs);
        if (!verdict.Passed)
        {
            return;
        }
        if (verdict.Kind == StructureKind.SenderMessage)
        {
            StageTrace.Mark(StageNames.PreSqPassed, verdict.Sender, verdict.Seq);
        }
        var body = verdict.Body;
        if (_passed is not null)
        {
            if (_passed.Forward(verdict.Kind, body) is not { } forwarded)
            {
                return;
            }
            body = forwarded;
        }
        if (MayBind(verdict))
        {
            _streams.Bind(verdict.Sender, stream);
        }
        await AddAsync(body.Span, nowMs, ct).ConfigureAwait(false);
    }

    /// <summary>
    /// A passed sender message has a number this pre-SQ had not seen, so it is no replay. An ACKREQ skips
    /// the window (b): a captured one could be replayed on another stream to divert the sender's ACKRES,
    /// so it binds only when its nonce is above the last one that bound. It is forwarded either way; the
    /// replicas refuse stale nonces themselves.
    /// </summary>
    private bool MayBind(in PreSqVerdict verdict)
    {
        if (verdict.Kind != StructureKind.AckRequest)
        {
            return true;
        }
        long nonce;
        try
        {
            nonce = AckRequestCodec.Decode(verdict.Body).Nonce;
        }
        catch (MalformedEnvelopeException)
        {
            return false;
        }
        if (_bindingNonces.TryGetValue(verdict.Sender, out var last) && nonce <= last)
        {
            return false;
        }
        _bindingNonces[verdict.Sender] = nonce;
        return true;
    }

    private ValueTask AddAsync(ReadOnlySpan<byte> item, long nowMs, CancellationToken ct) => ForwardAsync(_batcher.Add(item, nowMs), ct);

    private async ValueTask ForwardAsync(byte[]? payload, CancellationToken ct)
    {
        if (payload is null)
        {
            return;
        }
        if (!_forwarder.TryTakeSlot())
        {
            _metrics.OrderingStall();
            await _forwarder.TakeSlotAsync(ct).ConfigureAwait(false);
        }
        // Item count of the closed batch: u8 kind | u32 origin | u32 count.
        _forwarder.Submit(payload, BinaryPrimitives.ReadInt32LittleEndian(payload.AsSpan(5, 4)));
        StageTrace.MarkOrderingPayload(StageNames.PreSqSubmitted, payload);
    }

    private static long NowMs => MonotonicClock.Ms;

    private static long NowUs => MonotonicClock.Us;

    public async ValueTask DisposeAsync()
    {
        _inbox.Writer.TryComplete();
        await _stop.CancelAsync().ConfigureAwait(false);
        try
        {
            await _run.ConfigureAwait(false);
        }
#pragma warning disable CA1031 // a crash was already reported through Completion; shutdown goes on
        catch (Exception) when (_run.IsFaulted)
#pragma warning restore CA1031
        {
        }
        _batcher.Dispose();
        _stop.Dispose();
    }
}
