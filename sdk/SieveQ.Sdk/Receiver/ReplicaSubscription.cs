using Google.Protobuf;
using Microsoft.Extensions.Logging;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Transport;
using SieveQ.Transport.Reconnect;

namespace SieveQ.Sdk.Receiver;

/// <summary>
/// The post-SQ's stream from one replica-SQ (ReplicaSq.Subscribe), kept open for the receiver's life:
/// each (re)subscription is freshly signed (the replica refuses stale ones), and the replica answers
/// by first re-sending everything the receiver has not acknowledged, so nothing is lost while the
/// stream was down. Outputs go to the voter's queue; when that queue is full this loop stops reading,
/// and HTTP/2 flow control holds the replica back.
/// </summary>
internal sealed class ReplicaSubscription
{
    private readonly int _replica;
    private readonly GrpcChannel _channel;
    private readonly Func<byte[]> _signSubscription;
    private readonly Func<ReceiverInput, CancellationToken, ValueTask> _deliver;
    private readonly ReconnectBackoff _backoff;
    private readonly ILogger _log;
    private long _resubscribes;

    public ReplicaSubscription(int replica, GrpcChannel channel, Func<byte[]> signSubscription, Func<ReceiverInput, CancellationToken, ValueTask> deliver, SieveQReceiverOptions options, ILogger log)
    {
        _replica = replica;
        _channel = channel;
        _signSubscription = signSubscription;
        _deliver = deliver;
        _backoff = new ReconnectBackoff(options.ReconnectDelay, options.MaxReconnectDelay, BackoffJitter.Around(0.25));
        _log = log;
    }

    public long Resubscribes => Interlocked.Read(ref _resubscribes);

    public async Task RunAsync(CancellationToken stop)
    {
        while (!stop.IsCancellationRequested)
        {
            try
            {
                await SubscribeOnceAsync(stop).ConfigureAwait(false);
                _log.LogDebug("replica-SQ {Replica}: subscription ended", _replica);
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                return;
            }
#pragma warning disable CA1031 // any failure of the stream means: subscribe again later
            catch (Exception e)
#pragma warning restore CA1031
            {
                _log.LogDebug("replica-SQ {Replica}: subscription failed: {Reason}", _replica, e.Message);
            }
            Interlocked.Increment(ref _resubscribes);
            if (!await _backoff.WaitAsync(stop).ConfigureAwait(false))
            {
                return;
            }
        }
    }

    private async Task SubscribeOnceAsync(CancellationToken stop)
    {
        using var callEnded = CancellationTokenSource.CreateLinkedTokenSource(stop);
        var call = await _channel.StartCallAsync<ReceiverSubscription, ReplicaOutputFrame>(ProtocolNames.ReplicaSqService, ProtocolNames.Subscribe, ReplicaOutputFrame.Parser, callEnded.Token).ConfigureAwait(false);
        await using (call.ConfigureAwait(false))
        {
            await call.WriteAsync(new ReceiverSubscription { Canonical = UnsafeByteOperations.UnsafeWrap(_signSubscription()) }, callEnded.Token).ConfigureAwait(false);
            await call.CompleteRequestAsync().ConfigureAwait(false);
            var first = true;
            await foreach (var frame in call.ReadAllAsync(callEnded.Token).ConfigureAwait(false))
            {
                if (first)
                {
                    _backoff.Reset();
                    first = false;
                }
                await _deliver(new ReceiverInput(false, _replica, frame.Canonical.Memory), callEnded.Token).ConfigureAwait(false);
            }
        }
    }
}
