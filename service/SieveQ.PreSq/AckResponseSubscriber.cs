using Google.Protobuf;
using Microsoft.Extensions.Logging;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Sieve.Envelope;
using SieveQ.Deployment;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Transport;
using SieveQ.Transport.Reconnect;

namespace SieveQ.PreSq;

/// <summary>
/// Keeps one AckResponses subscription open to every replica-SQ and hands each ACKRES to the stream of
/// the sender it is for. Subscriptions are signed with this pre-SQ's ordering-client key and carry the
/// current time, so each reconnect signs a fresh one. A replica that is down or refuses is retried with
/// capped exponential back-off (jittered, so restarted pre-SQs do not reconnect in lockstep).
/// The pre-SQ cannot check an ACKRES's MAC (it is keyed per replica and sender); it only checks that
/// the bytes are an ACKRES from that replica for the sender named on the frame, so a faulty replica
/// cannot use the relay to push arbitrary bytes at some sender's stream.
/// </summary>
internal sealed partial class AckResponseSubscriber : IAsyncDisposable
{
    private const int MaxFrameBytes = 4 * 1024;

    private readonly int _preSqId;
    private readonly IReadOnlyList<ReplicaSqEntry> _replicas;
    private readonly IdentityKey _identity;
    private readonly Lock _signing = new();
    private readonly SenderStreams _streams;
    private readonly PreSqMetrics _metrics;
    private readonly TimeSpan _backoffMin;
    private readonly TimeSpan _backoffMax;
    private readonly ILogger _log;
    private readonly CancellationTokenSource _stop = new();
    private readonly List<Task> _loops = [];

    public AckResponseSubscriber(int preSqId, IReadOnlyList<ReplicaSqEntry> replicas, IdentityKey identity, SenderStreams streams,
        PreSqMetrics metrics, TimeSpan backoffMin, TimeSpan backoffMax, ILogger log)
    {
        _preSqId = preSqId;
        _replicas = replicas;
        _identity = identity;
        _streams = streams;
        _metrics = metrics;
        _backoffMin = backoffMin;
        _backoffMax = backoffMax;
        _log = log;
    }

    public void Start()
    {
        foreach (var r in _replicas)
        {
            _loops.Add(Task.Run(() => SubscribeLoopAsync(r, _stop.Token)));
        }
    }

    private async Task SubscribeLoopAsync(ReplicaSqEntry replica, CancellationToken ct)
    {
        using var channel = GrpcChannel.ForAddress(new Uri(replica.ApiUrl), replica.Pin(), MaxFrameBytes);
        // Up to half shorter, so restarted pre-SQs spread their reconnects.
        var backoff = new ReconnectBackoff(_backoffMin, _backoffMax, new BackoffJitter(0.5, 1.0));
        // Only the first failure after a working subscription is logged above debug.
        var attempt = 0;
        while (!ct.IsCancellationRequested)
        {
            var opened = DateTime.UtcNow;
            var received = false;
            try
            {
                received = await SubscribeOnceAsync(channel, replica.Id, ct).ConfigureAwait(false);
                LogEnded(replica.Id);
            }
            catch (OperationCanceledException) when (ct.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e) when (e is GrpcCallException or HttpRequestException or IOException or OperationCanceledException or InvalidOperationException)
            {
                if (attempt == 0 || _log.IsEnabled(LogLevel.Debug))
                {
                    LogFailed(replica.Id, e.Message);
                }
            }
            attempt++;
            _metrics.RelayReconnect();
            // A subscription that worked for a while starts the back-off over; one that keeps failing doubles it.
            if (received || DateTime.UtcNow - opened > _backoffMax)
            {
                backoff.Reset();
                attempt = 0;
            }
            if (!await backoff.WaitAsync(ct).ConfigureAwait(false))
            {
                return;
            }
        }
    }

    /// <returns>Whether any ACKRES arrived before the stream ended.</returns>
    private async Task<bool> SubscribeOnceAsync(GrpcChannel channel, int replica, CancellationToken ct)
    {
        var call = await channel.StartCallAsync<PreSqSubscription, AckResponseFrame>(ProtocolNames.ReplicaSqService, ProtocolNames.AckResponses, AckResponseFrame.Parser, ct)
            .ConfigureAwait(false);
        await using (call.ConfigureAwait(false))
        {
            await call.WriteAsync(new PreSqSubscription { Canonical = ByteString.CopyFrom(Subscription(replica)) }, ct).ConfigureAwait(false);
            await call.CompleteRequestAsync().ConfigureAwait(false);
            var received = false;
            _metrics.ReplicaSubscriptionUp();
            try
            {
                await foreach (var frame in call.ReadAllAsync(ct).ConfigureAwait(false))
                {
                    received = true;
                    Relay(replica, frame);
                }
            }
            finally
            {
                _metrics.ReplicaSubscriptionDown();
            }
            return received;
        }
    }

    private byte[] Subscription(int replica)
    {
        var now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        // .NET does not promise that one ECDsa object may sign on several threads at once.
        lock (_signing)
        {
            return SubscriptionCodec.Encode(StructureKind.PreSqSubscription, _preSqId, replica, now, _identity.Key);
        }
    }

    private void Relay(int replica, AckResponseFrame frame)
    {
        if (frame.Canonical.Length is < AckResponseCodec.Size or > EnvelopeLimits.MaxAckResponseBytes)
        {
            _metrics.AckResponseMalformed();
            return;
        }
        try
        {
            var r = AckResponseCodec.Decode(frame.Canonical.Span);
            if (r.Replica != replica || r.Sender != frame.Sender)
            {
                _metrics.AckResponseMalformed();
                return;
            }
        }
        catch (MalformedEnvelopeException)
        {
            _metrics.AckResponseMalformed();
            return;
        }
        _streams.Deliver(frame.Sender, frame.Canonical);
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        try
        {
            await Task.WhenAll(_loops).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // stopping
        }
        _stop.Dispose();
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "ACKRES subscription to replica-SQ {Replica} ended; reconnecting")]
    private partial void LogEnded(int replica);

    [LoggerMessage(Level = LogLevel.Warning, Message = "ACKRES subscription to replica-SQ {Replica} failed: {Reason}; retrying with back-off")]
    private partial void LogFailed(int replica, string reason);
}
