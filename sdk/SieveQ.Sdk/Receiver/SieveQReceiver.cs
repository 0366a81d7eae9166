using SieveQ.Transport.Tls;
using SieveQ.Sieve.Diagnostics;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using System.Threading.Channels;
using Google.Protobuf;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Hosting.Diagnostics;
using SieveQ.Sieve.Hosting.Storage;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Receiver;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Sdk.Internal;
using SieveQ.Transport;

namespace SieveQ.Sdk.Receiver;

/// <summary>
/// A post-SQ connected to every replica-SQ: subscribes to each one's outputs for this receiver, votes
/// on them (f+1 matching digests and a body that hashes to the digest), fetches bodies the designated
/// replica did not deliver, and hands messages to the application in order per sender, each once.
/// <para>
/// Exactly once across restarts: <see cref="CommitAsync(CancellationToken)"/> persists, per sender, the route number of
/// the last message handed over by <see cref="ReadAllAsync"/>, then tells the replicas (through a
/// pre-SQ) so they can drop what is committed. A restarted receiver resumes after the committed
/// cursors. Between handing a message over and the commit that covers it the guarantee is at least
/// once: if the process dies in that window, those messages are delivered again after the restart
/// (never skipped). Commit after processing to keep that window small, or let
/// <see cref="SieveQReceiverOptions.AutoCommitEvery"/> / <see cref="SieveQReceiverOptions.AutoCommitAfter"/>
/// commit when the application asks for the next message (the previous ones are processed by then).
/// </para>
/// </summary>
public sealed class SieveQReceiver : IAsyncDisposable
{
    private readonly PostSqVoter _voter;
    private readonly IDeliveryCursorStore _cursors;
    private readonly ECDsa _signingKey;
    private readonly SieveQReceiverOptions _options;
    private readonly ILogger _log;
    private readonly Dictionary<int, GrpcChannel> _replicas;
    private readonly List<ReplicaSubscription> _subscriptions = [];
    private readonly AcknowledgementRelay _relay;
    private readonly DeliveryProgress _progress;
    private readonly IDisposable[] _owned;
    private readonly Channel<ReceiverInput> _inputs;
    private readonly Channel<ReceivedMessage> _deliveries;
    private readonly SemaphoreSlim _committing = new(1, 1);
    private readonly CancellationTokenSource _stop = new();
    private readonly CancellationTokenSource _halt = new();
    private readonly CancellationTokenSource _running;
    private readonly List<Task> _tasks = [];
    private int _reading;
    private Exception? _failure;
    private long _delivered;
    private long _committed;
    private long _accepted;
    private long _rejected;
    private long _fetches;
    private long _fetchAnswers;

    internal SieveQReceiver(int receiverId, int f, ECDsa signingKey, Func<int, MacKeyRing?> ringForReplica, IDeliveryCursorStore cursors,
        IReadOnlyDictionary<int, Uri> replicaUrls, IReadOnlyDictionary<int, TlsPin> replicaPins, IEnumerable<(int Id, Uri Url, TlsPin? Pin)> preSqUrls, SieveQReceiverOptions options, ILogger? log, params IDisposable[] owned)
    {
        ArgumentNullException.ThrowIfNull(signingKey);
        ArgumentNullException.ThrowIfNull(cursors);
        ArgumentNullException.ThrowIfNull(replicaUrls);
        options.Validate();
        Id = receiverId;
        _signingKey = signingKey;
        _cursors = cursors;
        _options = options;
        _owned = owned;
        _log = log ?? Internal.DefaultLogging.For($"SieveQ.Sdk.Receiver.{receiverId}");
        _voter = new PostSqVoter(receiverId, f, ringForReplica, cursors, options.Protocol);
        _progress = new DeliveryProgress(_voter.CommittedCursors());
        _inputs = Channel.CreateBounded<ReceiverInput>(new BoundedChannelOptions(options.InputQueueCapacity) { SingleReader = true, FullMode = BoundedChannelFullMode.Wait });
        _deliveries = Channel.CreateBounded<ReceivedMessage>(new BoundedChannelOptions(options.DeliveryQueueCapacity) { SingleReader = true, SingleWriter = true, FullMode = BoundedChannelFullMode.Wait });
        _relay = new AcknowledgementRelay(preSqUrls, options.AcknowledgeTimeout, _log);
        _replicas = replicaUrls.ToDictionary(kv => kv.Key, kv => GrpcChannel.ForAddress(kv.Value, replicaPins.GetValueOrDefault(kv.Key)));
        _running = CancellationTokenSource.CreateLinkedTokenSource(_stop.Token, _halt.Token);
        foreach (var (replica, channel) in _replicas.OrderBy(kv => kv.Key))
        {
            var r = replica;
            var s = new ReplicaSubscription(r, channel, () => SignSubscription(r), (input, ct) => _inputs.Writer.WriteAsync(input, ct), options, _log);
            _subscriptions.Add(s);
            _tasks.Add(Task.Run(() => s.RunAsync(_running.Token)));
        }
        _tasks.Add(Task.Run(() => PumpAsync(_running.Token)));
        _tasks.Add(Task.Run(() => RetryAcknowledgementsAsync(_running.Token)));
        _meter = SdkMetrics.Observe(this);
    }

    private readonly System.Diagnostics.Metrics.Meter _meter;

    /// <summary>
    /// A receiver for enrolled receiver <paramref name="receiverId"/> of the configured deployment; its delivery
    /// cursors live in <paramref name="stateDir"/>, which one receiver process at a time may use.
    /// </summary>
    /// <exception cref="SieveQConfigurationException">The receiver is not enrolled, or its keys are missing or not the enrolled ones.</exception>
    public static SieveQReceiver Create(SieveQClientConfiguration config, int receiverId, string stateDir, SieveQReceiverOptions? options = null, ILogger? log = null)
    {
        ArgumentNullException.ThrowIfNull(config);
        ArgumentException.ThrowIfNullOrEmpty(stateDir);
        config.Validate();
        options ??= new SieveQReceiverOptions();
        options.Validate();
        // Votes for senders the enrolment does not list keep no state (a faulty replica could invent them).
        options = options with
        {
            Protocol = options.Protocol with { EnrolledSenders = options.Protocol.EnrolledSenders ?? config.Enrolment.Senders.Select(s => s.Id).ToHashSet() },
        };
        var keys = ClientKeys.OpenReceiver(config, receiverId);
        FileStream? exclusive = null;
        try
        {
            Directory.CreateDirectory(stateDir);
            // Two processes delivering for one receiver from one cursor file would each deliver everything.
            exclusive = StateFolder.OpenExclusive(() => new FileStream(Path.Combine(stateDir, $"receiver-{receiverId}.lock"), FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None),
                PartyKeyNames.Receiver, receiverId, stateDir);
            var store = new FileDeliveryCursorStore(Path.Combine(stateDir, $"receiver-{receiverId}.cursors"));
            var preSqs = config.PreSqs.OrderBy(p => p.Key).Select(p => (p.Key, p.Value, config.PreSqTlsPins.GetValueOrDefault(p.Key))).ToArray();
            return new SieveQReceiver(receiverId, config.F, keys.Signing, r => keys.Ring(MacChannel.ReplicaReceiver, r), store, config.Replicas, config.ReplicaTlsPins, preSqs, options, log, exclusive, keys);
        }
        catch
        {
            exclusive?.Dispose();
            keys.Dispose();
            throw;
        }
    }

    /// <summary>
    /// Checks with the running deployment, then creates the receiver as <see cref="Create"/> does: f+1 replica-SQs must
    /// agree that <paramref name="receiverId"/> is enrolled with the signing and key-agreement keys the configured key
    /// store holds. Waits at most <see cref="SieveQClientConfiguration.ConnectTimeout"/>.
    /// </summary>
    /// <exception cref="SieveQConfigurationException">f+1 replicas agree the receiver is not enrolled, or enrolled with other keys than the key store's.</exception>
    /// <remarks>
    /// Then it takes the id's lease through the ordering, so no other process acts under the id while this one does;
    /// it is renewed every 10 s and let go on dispose (sdk/README.md, "Connecting").
    /// </remarks>
    /// <exception cref="ConnectUnconfirmedException">No f+1 replicas answered alike in time, or no pre-SQ answered the lease request (the deployment is down or unreachable).</exception>
    /// <exception cref="IdHeldException">Another process holds the id's lease.</exception>
    public static async Task<SieveQReceiver> ConnectAsync(SieveQClientConfiguration config, int receiverId, string stateDir, SieveQReceiverOptions? options = null,
        ILogger? log = null, CancellationToken ct = default)
    {
        var logger = log ?? DefaultLogging.For($"SieveQ.Sdk.Receiver.{receiverId}");
        var confirmed = await ConnectedEnrolment.ConfirmAsync(config, PartyKeyNames.Receiver, receiverId, logger, ct).ConfigureAwait(false);
        var lease = await IdLeaseKeeper.AcquireAsync(confirmed, PartyKeyNames.Receiver, receiverId, stateDir, logger, ct).ConfigureAwait(false);
        SieveQReceiver receiver;
        try
        {
            receiver = Create(confirmed, receiverId, stateDir, options, log);
        }
        catch
        {
            await lease.AbandonAsync().ConfigureAwait(false);
            throw;
        }
        receiver.HoldUnder(lease);
        return receiver;
    }

    /// <summary>From now on acknowledgements are offered only while <paramref name="lease"/> is valid, and its loss stops the receiver.</summary>
    private void HoldUnder(IdLeaseKeeper lease)
    {
        _lease = lease;
        _relay.MayOffer = () => lease.Valid;
        lease.Lost = Halt;
    }

    /// <summary>
    /// For a receiver made with <see cref="Create"/> because the deployment did not answer: takes the id's lease once it
    /// does (asking every <paramref name="retryEvery"/>), then acknowledges only under it; stops the receiver when another
    /// process holds the id.
    /// </summary>
    internal Task TakeLeaseWhenReachableAsync(SieveQClientConfiguration config, string stateDir, TimeSpan retryEvery, ILogger log)
    {
        var stopping = _stop.Token;
        return LateLease.TakeAsync(config, PartyKeyNames.Receiver, Id, stateDir, log, retryEvery, lease =>
        {
            HoldUnder(lease);
            return null;
        }, Halt, stopping);
    }

    private IdLeaseKeeper? _lease;

    /// <summary>Stops receiving with <paramref name="reason"/>: the application's reading ends with it.</summary>
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

    /// <summary>The receiver id this post-SQ receives for.</summary>
    public int Id { get; }

    /// <summary>Counters of this receiver since it was created (a snapshot).</summary>
    public SieveQReceiverStats Stats => new(
        Id,
        Interlocked.Read(ref _delivered),
        Interlocked.Read(ref _committed),
        Interlocked.Read(ref _accepted),
        Interlocked.Read(ref _rejected),
        Interlocked.Read(ref _fetches),
        Interlocked.Read(ref _fetchAnswers),
        _subscriptions.Sum(s => s.Resubscribes),
        _relay.Sent,
        _relay.Failed);

    /// <summary>The cursors committed so far, per sender (route numbers).</summary>
    public IReadOnlyList<DeliveredCursor> CommittedCursors => _progress.Committed();

    /// <summary>
    /// Deliveries in order per sender, each once (see the class remarks for restarts). One reader at a
    /// time; ends when the receiver is disposed. While the application does not ask for the next
    /// message, the receiver stops reading the replicas: back-pressure, not loss.
    /// </summary>
    public async IAsyncEnumerable<ReceivedMessage> ReadAllAsync([EnumeratorCancellation] CancellationToken ct = default)
    {
        if (Interlocked.Exchange(ref _reading, 1) == 1)
        {
            throw new InvalidOperationException($"receiver {Id} already has a reader");
        }
        try
        {
            var lastCommit = Clock.MonotonicMs;
            while (true)
            {
                if (!_deliveries.Reader.TryRead(out var message))
                {
                    // Idle: everything handed over is processed, so a due commit is safe now.
                    if (await AutoCommitAsync(lastCommit, idle: true, ct).ConfigureAwait(false))
                    {
                        lastCommit = Clock.MonotonicMs;
                    }
                    if (!await WaitForDeliveryAsync(lastCommit, ct).ConfigureAwait(false))
                    {
                        ThrowIfFailed();
                        yield break;
                    }
                    continue;
                }
                _progress.Hand(message.Sender, message.RouteSeq);
                StageTrace.Mark(StageNames.ApplicationRead, message.Sender, message.SenderSeq);
                yield return message;
                // The application asked for the next one: the previous ones are processed.
                if (await AutoCommitAsync(lastCommit, idle: false, ct).ConfigureAwait(false))
                {
                    lastCommit = Clock.MonotonicMs;
                }
            }
        }
        finally
        {
            Volatile.Write(ref _reading, 0);
        }
    }

    /// <summary>Commits everything handed over by <see cref="ReadAllAsync"/> so far: persisted, then acknowledged to the replicas.</summary>
    public ValueTask CommitAsync(CancellationToken ct = default) => CommitAsync(null, ct);

    /// <summary>
    /// Commits, per sender, up to the given route numbers (capped at what was handed over): for hosts
    /// that hand messages on and learn later how far they were processed.
    /// </summary>
    public async ValueTask CommitAsync(IReadOnlyList<DeliveredCursor>? processedUpTo, CancellationToken ct = default)
    {
        await _committing.WaitAsync(ct).ConfigureAwait(false);
        byte[] ack;
        try
        {
            if (_progress.Propose(processedUpTo) is not { } cursors)
            {
                return;
            }
            _cursors.Save(cursors);
            Interlocked.Add(ref _committed, _progress.Commit(cursors, processedUpTo is null));
            lock (_signingKey)
            {
                ack = ReceiverAckCodec.Encode(Id, cursors, _signingKey);
            }
        }
        finally
        {
            _committing.Release();
        }
        // The commit is durable already; the acknowledgement only lets the replicas trim their queues.
        if (!await _relay.SendAsync(ack, ct).ConfigureAwait(false))
        {
            _log.LogWarning("receiver {Receiver}: no pre-SQ took the acknowledgement; it is offered again later", Id);
        }
    }

    private async ValueTask<bool> AutoCommitAsync(long lastCommit, bool idle, CancellationToken ct)
    {
        if (!_options.AutoCommits || _progress.HandedSinceCommit == 0)
        {
            return false;
        }
        var byCount = _options.AutoCommitEvery > 0 && _progress.HandedSinceCommit >= _options.AutoCommitEvery;
        var byTime = _options.AutoCommitAfter > TimeSpan.Zero && Clock.MonotonicMs - lastCommit >= (long)_options.AutoCommitAfter.TotalMilliseconds;
        // Without a time limit, an idle application would leave its last deliveries uncommitted forever.
        var idleFlush = idle && _options.AutoCommitAfter == TimeSpan.Zero;
        if (!(byCount || byTime || idleFlush))
        {
            return false;
        }
        await CommitAsync(null, ct).ConfigureAwait(false);
        return true;
    }

    private async ValueTask<bool> WaitForDeliveryAsync(long lastCommit, CancellationToken ct)
    {
        if (!_options.AutoCommits || _progress.HandedSinceCommit == 0 || _options.AutoCommitAfter == TimeSpan.Zero)
        {
            return await _deliveries.Reader.WaitToReadAsync(ct).ConfigureAwait(false);
        }
        var left = lastCommit + (long)_options.AutoCommitAfter.TotalMilliseconds - Clock.MonotonicMs;
        using var wake = CancellationTokenSource.CreateLinkedTokenSource(ct);
        wake.CancelAfter(TimeSpan.FromMilliseconds(Math.Max(1, left)));
        try
        {
            return await _deliveries.Reader.WaitToReadAsync(wake.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!ct.IsCancellationRequested)
        {
            return true;  // time for the auto-commit; the loop checks again
        }
    }

    private byte[] SignSubscription(int replica)
    {
        lock (_signingKey)
        {
            return SubscriptionCodec.Encode(StructureKind.ReceiverSubscription, Id, replica, Clock.WallMs, _signingKey);
        }
    }

    private async Task PumpAsync(CancellationToken stop)
    {
        // The pump outlives the call that created the receiver (an agent's request, whose activity is not sampled): its spans are roots.
        System.Diagnostics.Activity.Current = null;
        var readable = new ChannelWaiter<ReceiverInput>(_inputs.Reader);
        try
        {
            while (!stop.IsCancellationRequested)
            {
                while (_inputs.Reader.TryRead(out var input))
                {
                    var now = Clock.MonotonicMs;
                    var step = input.IsFetchResponse ? _voter.OnBodyFetchResponse(input.Bytes, now) : _voter.OnReplicaOutput(input.Bytes, now);
                    if (input.IsFetchResponse && step.Accepted)
                    {
                        Interlocked.Increment(ref _fetchAnswers);
                    }
                    Interlocked.Increment(ref step.Accepted ? ref _accepted : ref _rejected);
                    await HandOnAsync(step, stop).ConfigureAwait(false);
                }
                if (_voter.NextWakeupMs is { } due && due <= Clock.MonotonicMs)
                {
                    Fetch(_voter.Tick(Clock.MonotonicMs));
                }
                var delay = _voter.NextWakeupMs is { } wake ? Math.Max(0, wake - Clock.MonotonicMs) : -1;
                await PumpWait.AnyAsync([readable.Readable(stop)], delay, stop).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // disposed
        }
#pragma warning disable CA1031 // a pump failure must end the application's reading with the reason, not hang it
        catch (Exception e)
#pragma warning restore CA1031
        {
            _log.LogError(e, "receiver {Receiver}: pump failed", Id);
            _failure = e;
        }
        _deliveries.Writer.TryComplete();
    }

    private async ValueTask HandOnAsync(PostSqStep step, CancellationToken stop)
    {
        using var span = step.Deliveries.Count == 0 ? null : SdkTracing.Source.StartActivity("receiver deliver", System.Diagnostics.ActivityKind.Consumer);
        span?.SetTag("sieveq.receiver", Id);
        span?.SetTag("sieveq.messages", step.Deliveries.Count);
        foreach (var d in step.Deliveries)
        {
            StageTrace.Mark(StageNames.ReceiverVoted, d.Sender, d.SenderSeq);
            // Waits while the application is behind: the voter's inputs back up, then the replica streams.
            await _deliveries.Writer.WriteAsync(new ReceivedMessage(d.Sender, d.SenderSeq, d.RouteSeq, d.Data), stop).ConfigureAwait(false);
            Interlocked.Increment(ref _delivered);
        }
        Fetch(step.Fetches);
    }

    private void Fetch(IReadOnlyList<FetchOrder> orders)
    {
        foreach (var order in orders)
        {
            if (_replicas.TryGetValue(order.Replica, out var channel))
            {
                Interlocked.Increment(ref _fetches);
                _ = FetchAsync(order, channel, _stop.Token);
            }
        }
    }

    /// <summary>One body fetch; a failure needs no handling, the voter asks the next replica after its retry interval.</summary>
    private async Task FetchAsync(FetchOrder order, GrpcChannel channel, CancellationToken stop)
    {
        try
        {
            using var deadline = CancellationTokenSource.CreateLinkedTokenSource(stop);
            deadline.CancelAfter(_options.FetchTimeout);
            var reply = await channel.UnaryAsync(ProtocolNames.ReplicaSqService, ProtocolNames.FetchBodies,
                new BodyFetch { Canonical = UnsafeByteOperations.UnsafeWrap(order.Request) }, BodyFetchReply.Parser, deadline.Token).ConfigureAwait(false);
            if (!reply.Canonical.IsEmpty)
            {
                await _inputs.Writer.WriteAsync(new ReceiverInput(true, order.Replica, reply.Canonical.Memory), stop).ConfigureAwait(false);
            }
        }
#pragma warning disable CA1031 // see summary
        catch (Exception e)
#pragma warning restore CA1031
        {
            _log.LogDebug("replica-SQ {Replica}: body fetch failed: {Reason}", order.Replica, e.Message);
        }
    }

    private async Task RetryAcknowledgementsAsync(CancellationToken stop)
    {
        using var timer = new PeriodicTimer(_options.AcknowledgeRetry);
        try
        {
            while (await timer.WaitForNextTickAsync(stop).ConfigureAwait(false))
            {
                if (_relay.Owed)
                {
                    await _relay.RetryAsync(stop).ConfigureAwait(false);
                }
            }
        }
        catch (OperationCanceledException)
        {
            // disposed
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
            throw new InvalidOperationException($"receiver {Id} stopped: {f.Message}", f);
        }
    }

    /// <summary>Stops the replica subscriptions and the acknowledgement relay; what was not committed is delivered again to the next receiver on the same state folder.</summary>
    public async ValueTask DisposeAsync()
    {
        if (_stop.IsCancellationRequested)
        {
            return;
        }
        await _stop.CancelAsync().ConfigureAwait(false);
        _meter.Dispose();
        _inputs.Writer.TryComplete();
        await Task.WhenAll(_tasks).ConfigureAwait(false);
        _deliveries.Writer.TryComplete();
        foreach (var c in _replicas.Values)
        {
            c.Dispose();
        }
        _relay.Dispose();
        foreach (var d in _owned)
        {
            d.Dispose();
        }
        if (_lease is not null)
        {
            await _lease.DisposeAsync().ConfigureAwait(false);
        }
        _committing.Dispose();
        _running.Dispose();
        _halt.Dispose();
        _stop.Dispose();
    }
}
