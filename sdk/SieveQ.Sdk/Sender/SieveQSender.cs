using SieveQ.Transport.Tls;
using SieveQ.Sieve.Diagnostics;
using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Hosting.Diagnostics;
using SieveQ.Sieve.Hosting.Storage;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Sender;
using SieveQ.Sdk.Internal;

namespace SieveQ.Sdk.Sender;

/// <summary>
/// A sender-SQ connected to the pre-SQs: <see cref="SendAsync"/> numbers a message (numbers never
/// repeat, even across restarts), and the sender keeps it until f+1 replica-SQs acknowledge it,
/// retransmitting through another pre-SQ on time-out. Thread-safe: any number of callers may send.
/// <para>
/// One pump task owns the <see cref="SenderSq"/> (which is not thread-safe): it numbers queued sends
/// while the outstanding window has room, signs them in micro-batches (at most one flush, i.e. one
/// Merkle signature, per interval: <see cref="SieveQSenderOptions.FlushDelay"/> with an empty window,
/// stretching towards <see cref="SieveQSenderOptions.MaxFlushDelay"/> as it fills; the first message
/// after a pause goes out at once, so batching costs latency only under load), runs the sender-SQ's timers
/// and feeds it every ACKRES the pre-SQs relay. When the window is full the pump stops taking sends,
/// so callers wait in <see cref="SendAsync"/> until acknowledgements free room: back-pressure without
/// polling.
/// </para>
/// <para>
/// With the durable outbox (<see cref="SieveQSenderOptions.Outbox"/>, on by default) SendAsync returns only once the
/// message is fsynced in <c>stateDir/sender-N.outbox</c> (the messages numbered in one pass share one fsync), and a
/// message is sent only once it is durable; the next run on the same state directory sends what was not acknowledged
/// again with its original numbers, so a crash loses nothing SendAsync accepted. Without it, a message not yet
/// acknowledged when the process stops is not retransmitted by the next run.
/// </para>
/// </summary>
public sealed class SieveQSender : IAsyncDisposable
{
    private readonly SenderSq _sq;
    private readonly SieveQSenderOptions _options;
    private readonly IReadOnlyDictionary<int, PreSqLink> _links;
    private readonly IDisposable[] _owned;
    private readonly ILogger _log;
    private readonly Channel<SendRequest> _sends;
    private readonly Channel<byte[]> _ackResponses = Channel.CreateUnbounded<byte[]>(new UnboundedChannelOptions { SingleReader = true });
    private readonly AcknowledgementWaiters _acknowledged = new();
    private readonly CancellationTokenSource _stop = new();
    private readonly CancellationTokenSource _halt = new();
    private readonly CancellationTokenSource _running;
    private readonly Task _pump;
    private readonly OutboxFile? _outbox;
    private readonly List<(SendRequest Request, long Seq)> _numbered = [];
    private readonly OutcomeTracker _outcomes;
    private long _delivered;
    private long _rejected;
    private long _timedOut;
    private long _verdictUnknown;
    private Exception? _failure;
    private long _accepted;
    private long _lastSeq;
    private long _ackResponsesTaken;
    private long _ackRejected;
    private int _outstanding;
    private int _assignedPreSq;
    private SendAdmission? _admission;

    internal SieveQSender(int senderId, SenderSq sq, IReadOnlyDictionary<int, Uri> preSqUrls, IReadOnlyDictionary<int, TlsPin> preSqPins, SieveQSenderOptions options, ILogger? log, OutboxFile? outbox, params IDisposable[] owned)
    {
        ArgumentNullException.ThrowIfNull(sq);
        ArgumentNullException.ThrowIfNull(preSqUrls);
        options.Validate();
        Id = senderId;
        _sq = sq;
        _options = options;
        _owned = owned;
        _log = log ?? Internal.DefaultLogging.For($"SieveQ.Sdk.Sender.{senderId}");
        _sends = Channel.CreateBounded<SendRequest>(new BoundedChannelOptions(options.SendQueueCapacity) { SingleReader = true, FullMode = BoundedChannelFullMode.Wait });
        _links = preSqUrls.ToDictionary(kv => kv.Key, kv => new PreSqLink(kv.Key, kv.Value, preSqPins.GetValueOrDefault(kv.Key), options, OnAckResponseArrived, _log));
        _assignedPreSq = sq.AssignedPreSq;
        _lastSeq = sq.LastSentSeq;
        _outbox = outbox;
        _outcomes = new OutcomeTracker(options.OutcomeTimeout);
        _running = CancellationTokenSource.CreateLinkedTokenSource(_stop.Token, _halt.Token);
        _pump = Task.Run(() => PumpAsync(_running.Token));
        _meter = Internal.SdkMetrics.Observe(this);
    }

    private readonly System.Diagnostics.Metrics.Meter _meter;

    /// <summary>
    /// A sender for enrolled sender <paramref name="senderId"/> of the configured deployment: its signing key and
    /// MAC rings come from the configured key store; its sequence mark lives in <paramref name="stateDir"/>
    /// (one process at a time may use it: the file is opened exclusively).
    /// </summary>
    /// <exception cref="SieveQConfigurationException">The sender is not enrolled, or its keys are missing or not the enrolled ones.</exception>
    public static SieveQSender Create(SieveQClientConfiguration config, int senderId, string stateDir, SieveQSenderOptions? options = null, ILogger? log = null) =>
        CreateAbove(config, senderId, stateDir, options, log, sequenceFloor: 0);

    // sequenceFloor: numbers up to here are spent (the replicas took them from this id), so the run starts above it.
    private static SieveQSender CreateAbove(SieveQClientConfiguration config, int senderId, string stateDir, SieveQSenderOptions? options, ILogger? log, long sequenceFloor)
    {
        ArgumentNullException.ThrowIfNull(config);
        ArgumentException.ThrowIfNullOrEmpty(stateDir);
        config.Validate();
        options ??= new SieveQSenderOptions();
        options.Validate();
        var keys = ClientKeys.OpenSender(config, senderId);
        FileSequenceStore? store = null;
        OutboxFile? outbox = null;
        try
        {
            Directory.CreateDirectory(stateDir);
            store = StateFolder.OpenExclusive(() => new FileSequenceStore(Path.Combine(stateDir, $"sender-{senderId}.seq")), PartyKeyNames.Sender, senderId, stateDir);
            if (store.LoadReserved() < sequenceFloor)
            {
                // A new state folder, or one another holder of this id has since overtaken: numbers at or below the floor would be replays.
                store.SaveReserved(sequenceFloor);
            }
            // After the sequence file, whose exclusive open keeps a second process of this sender out.
            outbox = options.Outbox.Enabled ? OutboxFile.Open(Path.Combine(stateDir, $"sender-{senderId}.outbox")) : null;
            var preSqs = config.PreSqs.Keys.Order().ToArray();
            var initial = options.InitialPreSq ?? preSqs[(int)((uint)senderId % (uint)preSqs.Length)];
            var sq = new SenderSq(senderId, keys.Signing, new SenderSequencer(store), preSqs, initial, config.F,
                p => keys.Ring(MacChannel.SenderPreSq, p), r => keys.Ring(MacChannel.ReplicaSender, r), options.Protocol);
            IDisposable[] owned = outbox is null ? [store, keys] : [outbox, store, keys];
            var admission = SendAdmission.For(config, senderId,
                async c => (await EnrolmentCheck.AskAsync(config, PartyKeyNames.Sender, senderId, log ?? NullLogger.Instance, c).ConfigureAwait(false)).Routes,
                async (receiver, c) => (await EnrolmentCheck.AskAsync(config, PartyKeyNames.Receiver, receiver, log ?? NullLogger.Instance, c).ConfigureAwait(false)).State
                    == PartyStandingState.Enrolled);
            return new SieveQSender(senderId, sq, config.PreSqs, config.PreSqTlsPins, options, log, outbox, owned) { _admission = admission };
        }
        catch
        {
            outbox?.Dispose();
            store?.Dispose();
            keys.Dispose();
            throw;
        }
    }

    /// <summary>
    /// Checks with the running deployment, then creates the sender as <see cref="Create"/> does: f+1 replica-SQs must
    /// agree that <paramref name="senderId"/> is enrolled, not revoked, with the signing and key-agreement keys the
    /// configured key store holds. A sender enrolled through the ordering (<c>sieveq enrol sender</c>) after the
    /// configured enrolment was written starts with the keys the deployment reports, so the application needs no
    /// copy of its enrolment record. Waits at most <see cref="SieveQClientConfiguration.ConnectTimeout"/>.
    /// </summary>
    /// <exception cref="SieveQConfigurationException">f+1 replicas agree the sender is not enrolled, or revoked, or enrolled with other keys than the key store's.</exception>
    /// <remarks>
    /// Then it takes the id's lease through the ordering, so no other process acts under the id while this one does;
    /// it is renewed every 10 s and let go on dispose (sdk/README.md, "Connecting").
    /// </remarks>
    /// <exception cref="ConnectUnconfirmedException">No f+1 replicas answered alike in time, or no pre-SQ answered the lease request (the deployment is down or unreachable).</exception>
    /// <exception cref="IdHeldException">Another process holds the id's lease.</exception>
    public static async Task<SieveQSender> ConnectAsync(SieveQClientConfiguration config, int senderId, string stateDir, SieveQSenderOptions? options = null,
        ILogger? log = null, CancellationToken ct = default)
    {
        var logger = log ?? DefaultLogging.For($"SieveQ.Sdk.Sender.{senderId}");
        var confirmed = await ConnectedEnrolment.ConfirmAsync(config, PartyKeyNames.Sender, senderId, logger, ct).ConfigureAwait(false);
        var lease = await IdLeaseKeeper.AcquireAsync(confirmed, PartyKeyNames.Sender, senderId, stateDir, logger, ct).ConfigureAwait(false);
        SieveQSender sender;
        try
        {
            sender = CreateAbove(confirmed, senderId, stateDir, options, log, lease.SequenceFloor);
        }
        catch
        {
            await lease.AbandonAsync().ConfigureAwait(false);
            throw;
        }
        sender.HoldUnder(lease);
        return sender;
    }

    private IdLeaseKeeper? _lease;

    /// <summary>From now on frames leave only while <paramref name="lease"/> is valid, and its loss stops the sender; disposing the sender lets it go.</summary>
    internal void HoldUnder(IdLeaseKeeper lease)
    {
        _lease = lease;
        lease.Lost = Halt;
    }

    /// <summary>
    /// For a sender made with <see cref="Create"/> because the deployment did not answer: takes the id's lease once it
    /// does (asking every <paramref name="retryEvery"/>), then sends only under it. Stops the sender when another process
    /// holds the id, or when the replicas already took higher numbers from it than this sender has (another process sent
    /// under the id meanwhile: what this one numbers would be dropped as replays).
    /// </summary>
    internal Task TakeLeaseWhenReachableAsync(SieveQClientConfiguration config, string stateDir, TimeSpan retryEvery, ILogger log)
    {
        var stopping = _stop.Token;
        return LateLease.TakeAsync(config, PartyKeyNames.Sender, Id, stateDir, log, retryEvery, lease =>
        {
            HoldUnder(lease);
            // This sender itself reaches LastSeq with its messages and LastSeq + 1 with its ACKREQ nonces (built on its
            // next number); anything above came from another process.
            return lease.SequenceFloor > LastSeq + 1
                ? new SieveQConfigurationException($"sender {Id}: while it held no lease the replicas took numbers up to {lease.SequenceFloor} "
                    + $"from the id, above this sender's {LastSeq}: another process sent as sender {Id}; what this one numbers would be dropped as replays")
                : null;
        }, Halt, stopping);
    }
    private long _framesHeldForLease;

    /// <summary>Frames not sent because this run's id lease could not be renewed in time (see <c>ConnectAsync</c>).</summary>
    internal long FramesHeldForLease => Interlocked.Read(ref _framesHeldForLease);

    /// <summary>Stops the pump with <paramref name="reason"/>: every waiting and later call fails with it.</summary>
    private void Halt(Exception reason)
    {
        Interlocked.CompareExchange(ref _failure, reason, null);
        try
        {
            _halt.Cancel();
        }
        catch (ObjectDisposedException)
        {
            // disposed meanwhile
        }
    }

    /// <summary>The sender id whose key signs every message.</summary>
    public int Id { get; }

    /// <summary>Highest sequence number such that it and every number below were acknowledged by f+1 replica-SQs.</summary>
    public long AcknowledgedUpTo => _acknowledged.AcknowledgedUpTo;

    /// <summary>The number of the last message accepted (0 before any in this run; numbers of earlier runs are lower).</summary>
    public long LastSeq => Interlocked.Read(ref _lastSeq);

    /// <summary>Counters of this sender since it was created (a snapshot).</summary>
    public SieveQSenderStats Stats => new(
        Id,
        Interlocked.Read(ref _accepted),
        LastSeq,
        AcknowledgedUpTo,
        Volatile.Read(ref _outstanding),
        Volatile.Read(ref _assignedPreSq),
        _links.Values.Sum(l => l.FramesSent),
        _links.Values.Sum(l => l.FramesDropped),
        Interlocked.Read(ref _ackResponsesTaken),
        Interlocked.Read(ref _ackRejected),
        _links.Values.Sum(l => l.Reconnects),
        _sq.Retransmissions,
        _sq.RetransmitTimeoutMs,
        _sq.RootsSigned,
        _outbox?.Index.PendingCount ?? 0,
        _outbox?.Index.PendingBytes ?? 0,
        _outbox?.Compactions ?? 0,
        Interlocked.Read(ref _delivered),
        Interlocked.Read(ref _rejected),
        Interlocked.Read(ref _timedOut),
        Interlocked.Read(ref _verdictUnknown),
        _outcomes.VerdictLatency.Read(Clock.MonotonicMs));

    /// <summary>
    /// Numbers <paramref name="data"/> for <paramref name="receiver"/> and queues it; returns the numbered message, whose
    /// <see cref="SentMessage.Outcome"/> completes with the replicas' verdict (<see cref="MessageOutcomeKind"/>), and which
    /// converts to its sequence number. Waits while the outstanding window is full. <paramref name="data"/> must not
    /// change until this returns. A cancelled call did not number (and will not send) the message.
    /// </summary>
    /// <exception cref="SendRefusedException">
    /// The deployment would refuse it (receiver not enrolled, no route, above the route's size): refused here,
    /// unnumbered, instead of acknowledged and dropped by the replicas' rules.
    /// </exception>
    public async ValueTask<SentMessage> SendAsync(int receiver, ReadOnlyMemory<byte> data, CancellationToken ct = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(receiver);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(data.Length, EnvelopeLimits.MaxDataBytes, nameof(data));
        if (_admission is { } admission)
        {
            await admission.CheckAsync(receiver, data.Length, ct).ConfigureAwait(false);
        }
        ThrowIfFailed();
        var request = new SendRequest(receiver, data);
        using var unavailable = CancellationTokenSource.CreateLinkedTokenSource(ct);
        unavailable.CancelAfter(_options.UnavailableAfter);
        try
        {
            await _sends.Writer.WriteAsync(request, unavailable.Token).ConfigureAwait(false);
            using (unavailable.Token.Register(static (r, token) => ((SendRequest)r!).Cancel(token), request))
            {
                return await request.Numbered.ConfigureAwait(false);
            }
        }
        catch (ChannelClosedException)
        {
            ThrowIfFailed();
            throw new ObjectDisposedException(nameof(SieveQSender));
        }
        catch (OperationCanceledException) when (!ct.IsCancellationRequested && unavailable.IsCancellationRequested)
        {
            throw Unavailable();
        }
    }

    private SieveQUnavailableException Unavailable() =>
        new(Id, AcknowledgedUpTo, Volatile.Read(ref _outstanding), _options.UnavailableAfter, OutboxFull ? OutboxFullReason() : null);

    private string OutboxFullReason() =>
        $"its outbox is full ({_outbox!.Index.PendingCount} messages, {_outbox.Index.PendingBytes} bytes pending; bounds {_options.Outbox.MaxMessages} messages, {_options.Outbox.MaxBytes} bytes)";

    /// <summary>Completes when f+1 replica-SQs acknowledged <paramref name="seq"/> and everything before it.</summary>
    /// <exception cref="SieveQUnavailableException">The acknowledged prefix did not move for <see cref="SieveQSenderOptions.UnavailableAfter"/>.</exception>
    public async Task WaitAcknowledgedAsync(long seq, CancellationToken ct = default)
    {
        while (true)
        {
            var before = AcknowledgedUpTo;
            using var unavailable = CancellationTokenSource.CreateLinkedTokenSource(ct);
            unavailable.CancelAfter(_options.UnavailableAfter);
            try
            {
                await _acknowledged.WaitAsync(seq, unavailable.Token).ConfigureAwait(false);
                return;
            }
            catch (OperationCanceledException) when (!ct.IsCancellationRequested && unavailable.IsCancellationRequested)
            {
                if (AcknowledgedUpTo == before)
                {
                    throw Unavailable();
                }
            }
        }
    }

    private void OnAckResponseArrived(byte[] bytes) => _ackResponses.Writer.TryWrite(bytes);

    private async Task PumpAsync(CancellationToken stop)
    {
        var sendsReadable = new ChannelWaiter<SendRequest>(_sends.Reader);
        var acksReadable = new ChannelWaiter<byte[]>(_ackResponses.Reader);
        var minFlushMs = (long)Math.Ceiling(_options.FlushDelay.TotalMilliseconds);
        var maxFlushMs = (long)Math.Ceiling(_options.MaxFlushDelay.TotalMilliseconds);
        var lastFlushAt = long.MinValue / 2;
        var staged = 0;
        try
        {
            RestoreOutbox();
            while (!stop.IsCancellationRequested)
            {
                var now = Clock.MonotonicMs;
                while (_ackResponses.Reader.TryRead(out var ack))
                {
                    TakeAckResponse(ack, now);
                }
                while (HasRoom && _sends.Reader.TryRead(out var request))
                {
                    if (!request.TryClaim())
                    {
                        continue;
                    }
                    if (!_sq.TryEnqueue(request.Receiver, request.Data.Span, out var seq))
                    {
                        request.Fail(new InvalidOperationException("the sender-SQ refused a message despite room in its window"));
                        continue;
                    }
                    StageTrace.Mark(StageNames.SenderNumbered, Id, seq);
                    _outbox?.Append(seq, request.Receiver, request.Data.Span);
                    _numbered.Add((request, seq));
                    if (++staged >= _options.FlushAtStaged)
                    {
                        CommitNumbered();
                        DispatchFlush(now);
                        lastFlushAt = now;
                        staged = 0;
                    }
                }
                // Group commit: every SendAsync numbered in this pass shares one fsync, and returns only after it.
                CommitNumbered();
                var flushDelayMs = FlushPacing.IntervalMs(minFlushMs, maxFlushMs, _sq.Outstanding, _options.Protocol.MaxOutstanding);
                if (_sq.Staged > 0 && now - lastFlushAt >= flushDelayMs)
                {
                    DispatchFlush(now);
                    lastFlushAt = now;
                    staged = 0;
                }
                if (_sq.NextWakeupMs is { } due && due <= now)
                {
                    Dispatch(_sq.Tick(now));
                }
                Volatile.Write(ref _outstanding, _sq.Outstanding);
                _outcomes.Expire(now, Record);

                var deadline = long.MaxValue;
                if (_sq.Staged > 0)
                {
                    deadline = lastFlushAt + flushDelayMs;
                }
                if (_sq.NextWakeupMs is { } wake)
                {
                    deadline = Math.Min(deadline, wake);
                }
                var delay = deadline == long.MaxValue ? -1 : Math.Max(0, deadline - Clock.MonotonicMs);
                if (_outcomes.NextDeadlineMs is { } outcomeDue)
                {
                    deadline = Math.Min(deadline, outcomeDue);
                }
                Task[] signals = HasRoom ? [acksReadable.Readable(stop), sendsReadable.Readable(stop)] : [acksReadable.Readable(stop)];
                await PumpWait.AnyAsync(signals, delay, stop).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // disposed
        }
#pragma warning disable CA1031 // a pump failure (e.g. the sequence file cannot be written) must reach every caller, not vanish
        catch (Exception e)
#pragma warning restore CA1031
        {
            _log.LogError(e, "sender {Sender}: pump failed", Id);
            _failure = e;
        }
        var reason = _failure ?? new ObjectDisposedException(nameof(SieveQSender));
        foreach (var (numbered, _) in _numbered)
        {
            numbered.Fail(reason);
        }
        _numbered.Clear();
        _sends.Writer.TryComplete();
        while (_sends.Reader.TryRead(out var left))
        {
            left.Fail(reason);
        }
        _acknowledged.FailAll(reason);
        _outcomes.FailAll(reason);
    }

    private bool HasRoom => _sq.Outstanding < _options.Protocol.MaxOutstanding && !OutboxFull;

    /// <summary>
    /// The outbox holds its bound of pending bytes or messages: no more are numbered until acknowledgements free room
    /// (back-pressure; the bound is soft by at most one message, whose size is not known before it is taken).
    /// </summary>
    private bool OutboxFull => _outbox is { } o
        && (o.Index.PendingBytes >= _options.Outbox.MaxBytes || o.Index.PendingCount >= _options.Outbox.MaxMessages);

    /// <summary>Sends again, with their own numbers, the messages an earlier run accepted and saw no acknowledgement for.</summary>
    private void RestoreOutbox()
    {
        if (_outbox is not { Recovered.Count: > 0 } o)
        {
            return;
        }
        _log.LogInformation("sender {Sender}: sending again {Count} messages an earlier run accepted ({First}..{Last}){Torn}", Id, o.Recovered.Count,
            o.Recovered[0].Seq, o.Recovered[^1].Seq, o.TornTailCut ? "; a torn last record was cut" : "");
        Dispatch(_sq.Restore(o.Recovered.Select(m => (m.Seq, m.Receiver, m.Data)).ToList(), Clock.MonotonicMs));
        Volatile.Write(ref _outstanding, _sq.Outstanding);
    }

    /// <summary>Makes the numbered messages durable (one fsync) and only then tells their callers their numbers.</summary>
    private void CommitNumbered()
    {
        if (_numbered.Count == 0)
        {
            return;
        }
        _outbox?.Commit();
        var now = Clock.MonotonicMs;
        foreach (var (request, seq) in _numbered)
        {
            request.Complete(new SentMessage(seq, request.Receiver, _outcomes.Track(seq, request.Receiver, now)));
            Interlocked.Increment(ref _accepted);
            Interlocked.Exchange(ref _lastSeq, seq);
        }
        _numbered.Clear();
    }

    private void TakeAckResponse(byte[] bytes, long now)
    {
        var outcome = _sq.OnAckResponse(bytes, now);
        if (!outcome.Accepted)
        {
            Interlocked.Increment(ref _ackRejected);
            return;
        }
        Interlocked.Increment(ref _ackResponsesTaken);
        if (outcome.Reassigned)
        {
            _log.LogInformation("sender {Sender}: the replica-SQs moved it to pre-SQ {PreSq}", Id, outcome.AssignedPreSq);
        }
        Volatile.Write(ref _assignedPreSq, outcome.AssignedPreSq);
        _outbox?.AcknowledgeUpTo(outcome.AcknowledgedUpTo);
        if (outcome.Newly is { } verdicts)
        {
            foreach (var j in _outcomes.Settle(verdicts, Record, now))
            {
                Interlocked.Increment(ref _rejected);
                SenderOutcomeMetrics.Count(MessageOutcomeKind.Rejected);
                _log.LogWarning("sender {Sender}: message {Seq} (not awaited by this run) rejected by the replica-SQs: {Reason}: {Rule}", Id, j.Seq, j.Reason, j.Rule);
            }
        }
        _acknowledged.Advance(outcome.AcknowledgedUpTo);
    }

    /// <summary>Counts an outcome; rejections and time-outs are warnings, since nobody may be awaiting the handle.</summary>
    private void Record(MessageOutcome o)
    {
        SenderOutcomeMetrics.Count(o.Kind);
        switch (o.Kind)
        {
            case MessageOutcomeKind.Delivered:
                Interlocked.Increment(ref _delivered);
                break;
            case MessageOutcomeKind.Rejected:
                Interlocked.Increment(ref _rejected);
                _log.LogWarning("sender {Sender}: message {Seq} to receiver {Receiver} rejected by the replica-SQs: {Reason}: {Rule}", Id, o.Seq, o.Receiver, o.Reason, o.Rule);
                break;
            case MessageOutcomeKind.TimedOut:
                Interlocked.Increment(ref _timedOut);
                _log.LogWarning("sender {Sender}: message {Seq} to receiver {Receiver} has no verdict after {Timeout} s; still retransmitted", Id, o.Seq, o.Receiver, _options.OutcomeTimeout.TotalSeconds);
                break;
            default:
                Interlocked.Increment(ref _verdictUnknown);
                _log.LogWarning("sender {Sender}: message {Seq} to receiver {Receiver} was taken by the replica-SQs, whose verdict was not kept", Id, o.Seq, o.Receiver);
                break;
        }
    }

    private void DispatchFlush(long now)
    {
        var from = _sq.LastSentSeq;
        Dispatch(_sq.Flush(now));
        if (StageTrace.Enabled)
        {
            for (var seq = from + 1; seq <= _sq.LastSentSeq; seq++)
            {
                StageTrace.Mark(StageNames.SenderFlushed, Id, seq);
            }
        }
    }

    private void Dispatch(IReadOnlyList<OutgoingFrame> frames)
    {
        if (_lease is { Valid: false })
        {
            // No lease this run can count on: another process may hold the id by now. The sender-SQ retransmits what is
            // unacknowledged once the lease is renewed; the outbox keeps it meanwhile.
            Interlocked.Add(ref _framesHeldForLease, frames.Count);
            return;
        }
        foreach (var f in frames)
        {
            if (_links.TryGetValue(f.PreSq, out var link))
            {
                link.Send(f.Frame);
            }
        }
    }

    private void ThrowIfFailed()
    {
        if (_failure is IdHeldException held)
        {
            throw new IdHeldException(held.Party, held.Id, held.Holder, held.HeldFor);
        }
        if (_failure is { } f)
        {
            throw new InvalidOperationException($"sender {Id} stopped: {f.Message}", f);
        }
    }

    /// <summary>Stops sending and closes the state files; what is in the outbox and not acknowledged is sent again by the next sender on the same state folder.</summary>
    public async ValueTask DisposeAsync()
    {
        if (_stop.IsCancellationRequested)
        {
            return;
        }
        await _stop.CancelAsync().ConfigureAwait(false);
        _meter.Dispose();
        await _pump.ConfigureAwait(false);
        if (_failure is null)
        {
            // The pump has stopped, so nothing numbers any more: a clean restart then skips one number, not ~1,025.
            _sq.ReleaseUnusedNumbers();
        }
        foreach (var link in _links.Values)
        {
            await link.DisposeAsync().ConfigureAwait(false);
        }
        foreach (var d in _owned)
        {
            d.Dispose();
        }
        if (_lease is not null)
        {
            // After the state files are closed, so the next holder finds them free.
            await _lease.DisposeAsync().ConfigureAwait(false);
        }
        _running.Dispose();
        _halt.Dispose();
        _stop.Dispose();
    }
}
