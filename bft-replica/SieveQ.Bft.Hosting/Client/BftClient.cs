using System.Buffers;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Bft.Client;
using SieveQ.Bft.Codec;
using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Bft.Hosting.Replica;
using SieveQ.Bft.Hosting.Transport;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Client;

public sealed record BftClientOptions
{
    /// <summary>Requests in flight; <see cref="BftClient.SubmitAsync"/> waits when the window is full (back-pressure).</summary>
    public int Window { get; init; } = 256;
    public long RetransmitMs { get; init; } = 1_000;
    /// <summary>Sequence numbers start above this (a restarted client passes its persisted high-water mark).</summary>
    public long FirstSequence { get; init; }
}

/// <summary>
/// A client of the ordering service: one authenticated connection per replica, each request sent to all of
/// them, completed when f+1 replicas reply with the same instance and result (the pure
/// <see cref="OrderingClient"/> decides that), retransmitted until then.
/// </summary>
public sealed class BftClient : IAsyncDisposable
{
    private readonly OrderingClient _ordering;
    private readonly Lock _lock = new();
    private readonly Dictionary<long, TaskCompletionSource<CompletedRequest>> _waiting = [];
    private readonly SemaphoreSlim _window;
    private readonly List<PeerConnector> _replicas = [];
    private readonly HostClock _clock = new();
    private readonly Timer _retransmit;

    public BftClient(ClusterConfig cluster, int clientId, IdentityKey identity, BftClientOptions? options = null, ILoggerFactory? logs = null)
        : this(cluster.Protocol, cluster.Replicas, cluster.Links, new KeyRing(cluster), clientId, identity, options, logs)
    {
    }

    /// <summary>
    /// Also used against the unreplicated baseline server, by passing a single endpoint and a protocol
    /// config with N = 1 (then one reply completes a request).
    /// </summary>
    public BftClient(ReplicaConfig protocol, IReadOnlyList<ReplicaEntry> replicas, LinkSettings links, KeyRing ring, int clientId, IdentityKey identity, BftClientOptions? options = null, ILoggerFactory? logs = null)
    {
        options ??= new BftClientOptions();
        ClientId = clientId;
        MaxRequestPayloadBytes = protocol.MaxRequestPayloadBytes;
        var window = Math.Min(options.Window, protocol.ClientWindow);
        _ordering = new OrderingClient(clientId, protocol, new EcdsaProofSigner(identity), options.RetransmitMs, window, options.FirstSequence);
        _window = new SemaphoreSlim(window, window);
        logs ??= NullLoggerFactory.Instance;
        foreach (var r in replicas)
        {
            var peer = new PeerConnector(r.ParseEndpoint(), clientId, r.Id, identity, ring, links, OnMessageAsync, logs.CreateLogger($"client-{clientId}.link-{r.Id}"));
            _replicas.Add(peer);
        }
        var period = Math.Max(10, options.RetransmitMs / 4);
        _retransmit = new Timer(_ => Retransmit(), null, period, period);
        foreach (var p in _replicas)
        {
            p.Start();
        }
    }

    public int ClientId { get; }

    /// <summary>The largest payload the cluster orders (<see cref="ReplicaConfig.MaxRequestPayloadBytes"/>).</summary>
    public int MaxRequestPayloadBytes { get; }
    public int ConnectedReplicas => _replicas.Count(p => p.IsConnected);
    public long Retransmissions { get { lock (_lock) { return _ordering.Retransmissions; } } }

    /// <summary>Waits until at least <paramref name="count"/> replica links are up, or the timeout passes.</summary>
    public async Task<bool> WaitConnectedAsync(int count, TimeSpan timeout, CancellationToken ct = default)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (ConnectedReplicas < count)
        {
            if (DateTime.UtcNow > deadline)
            {
                return false;
            }
            await Task.Delay(20, ct).ConfigureAwait(false);
        }
        return true;
    }

    /// <summary>Orders one request; completes when f+1 replicas agree on its result. Waits for window space first.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The payload is above <see cref="MaxRequestPayloadBytes"/>: no replica would order it.</exception>
    public async Task<CompletedRequest> SubmitAsync(ReadOnlyMemory<byte> payload, CancellationToken ct = default)
    {
        if (payload.Length > MaxRequestPayloadBytes)
        {
            throw new ArgumentOutOfRangeException(nameof(payload), $"a request of {payload.Length} bytes is above the cluster's limit of {MaxRequestPayloadBytes}");
        }
        await _window.WaitAsync(ct).ConfigureAwait(false);
        var tcs = new TaskCompletionSource<CompletedRequest>(TaskCreationOptions.RunContinuationsAsynchronously);
        OutboundPayload bytes;
        lock (_lock)
        {
            var request = _ordering.Submit(payload.ToArray(), _clock.NowMs)
                ?? throw new InvalidOperationException("ordering window full although the semaphore admitted the request");
            _waiting[request.Sequence] = tcs;
            bytes = OutboundPayload.Encode(request, references: _replicas.Count);
            // Queued under the lock so requests reach every replica in sequence order, as they were numbered;
            // sent after it, so no send runs under the lock.
            foreach (var p in _replicas)
            {
                p.Queue.TryEnqueueDeferred(bytes);
            }
        }
        foreach (var p in _replicas)
        {
            p.Queue.Kick();
        }
        return await tcs.Task.WaitAsync(ct).ConfigureAwait(false);
    }

    private ValueTask OnMessageAsync(BftMessage message, int bytes)
    {
        if (message is not Reply reply)
        {
            TransportCounters.Drop(DropReason.UnexpectedType);
            return ValueTask.CompletedTask;
        }
        List<CompletedRequest> done;
        List<(TaskCompletionSource<CompletedRequest> Waiter, CompletedRequest Result)>? finished = null;
        lock (_lock)
        {
            _ordering.OnReply(reply, _clock.NowMs);
            done = _ordering.DrainCompleted();
            foreach (var c in done)
            {
                if (_waiting.Remove(c.Sequence, out var tcs))
                {
                    (finished ??= []).Add((tcs, c));
                }
            }
        }
        if (finished is not null)
        {
            foreach (var (waiter, result) in finished)
            {
                waiter.TrySetResult(result);
            }
            _window.Release(finished.Count);
        }
        return ValueTask.CompletedTask;
    }

    private void Retransmit()
    {
        List<OutboundPayload> resend = [];
        lock (_lock)
        {
            foreach (var r in _ordering.DueRetransmissions(_clock.NowMs))
            {
                resend.Add(OutboundPayload.Encode(r, references: _replicas.Count));
            }
        }
        foreach (var bytes in resend)
        {
            foreach (var p in _replicas)
            {
                p.Queue.TryEnqueueDeferred(bytes);
            }
        }
        foreach (var p in _replicas)
        {
            p.Queue.Kick();
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _retransmit.DisposeAsync().ConfigureAwait(false);
        foreach (var p in _replicas)
        {
            await p.DisposeAsync().ConfigureAwait(false);
        }
        lock (_lock)
        {
            foreach (var tcs in _waiting.Values)
            {
                tcs.TrySetCanceled();
            }
            _waiting.Clear();
        }
        _window.Dispose();
    }
}
