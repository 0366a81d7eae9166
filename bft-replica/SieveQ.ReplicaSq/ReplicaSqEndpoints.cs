using Google.Protobuf;
using Microsoft.AspNetCore.Routing;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.ReplicaSq;

/// <summary>The gRPC service sieveq.v1.ReplicaSq: Subscribe and FetchBodies for post-SQs, AckResponses for pre-SQs, Health for operators.</summary>
internal sealed class ReplicaSqEndpoints
{
    private const int SubscriptionBytes = 1024;

    private readonly int _replica;
    private readonly Func<SieveReadModel> _readModel;
    private readonly SubscriptionCheck _check;
    private readonly ReceiverStreams _receivers;
    private readonly PreSqAckResponseQueues _acks;
    private readonly Func<int, MacKeyRing?> _ringForReceiver;
    private readonly ReplicaSqMetrics _metrics;
    private readonly ReplicaSqHostOptions _options;
    private readonly Func<HealthReply> _health;
    private readonly PublicKeyDirectory _enrolled;
    private readonly IReceiverOutputGate? _gate;
    private readonly CancellationToken _shutdown;

    public ReplicaSqEndpoints(int replica, Func<SieveReadModel> readModel, SubscriptionCheck check, ReceiverStreams receivers, PreSqAckResponseQueues acks,
        Func<int, MacKeyRing?> ringForReceiver, ReplicaSqMetrics metrics, ReplicaSqHostOptions options, Func<HealthReply> health, PublicKeyDirectory enrolled,
        IReceiverOutputGate? gate, CancellationToken shutdown)
    {
        _enrolled = enrolled;
        _replica = replica;
        _readModel = readModel;
        _check = check;
        _receivers = receivers;
        _acks = acks;
        _ringForReceiver = ringForReceiver;
        _metrics = metrics;
        _options = options;
        _health = health;
        _gate = gate;
        _shutdown = shutdown;
    }

    public void Map(IEndpointRouteBuilder routes)
    {
        routes.MapGrpcMethod<ReceiverSubscription, ReplicaOutputFrame>(ProtocolNames.ReplicaSqService, ProtocolNames.Subscribe, ReceiverSubscription.Parser,
            SubscribeAsync, SubscriptionBytes);
        routes.MapGrpcMethod<BodyFetch, BodyFetchReply>(ProtocolNames.ReplicaSqService, ProtocolNames.FetchBodies, BodyFetch.Parser,
            FetchBodiesAsync, _options.MaxRequestBytes);
        routes.MapGrpcMethod<PreSqSubscription, AckResponseFrame>(ProtocolNames.ReplicaSqService, ProtocolNames.AckResponses, PreSqSubscription.Parser,
            AckResponsesAsync, SubscriptionBytes);
        routes.MapGrpcMethod<HealthRequest, HealthReply>(ProtocolNames.ReplicaSqService, ProtocolNames.Health, HealthRequest.Parser, HealthAsync, SubscriptionBytes);
        routes.MapGrpcMethod<EnrolmentLookup, EnrolmentStanding>(ProtocolNames.ReplicaSqService, ProtocolNames.Enrolment, EnrolmentLookup.Parser, EnrolmentAsync,
            SubscriptionBytes);
    }

    private async Task SubscribeAsync(GrpcServerCall<ReceiverSubscription, ReplicaOutputFrame> call)
    {
        var request = await ReadFirstAsync(call).ConfigureAwait(false);
        var receiver = _check.Receiver(request.Canonical.Memory);
        var stream = _receivers.Open(receiver);
        using (stream)
        {
            using var linked = CancellationTokenSource.CreateLinkedTokenSource(call.CallAborted, stream.Ended, _shutdown);
            try
            {
                await stream.WriteToAsync(call, linked.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (!call.CallAborted.IsCancellationRequested)
            {
                // Replaced, too slow or shutting down: handled below.
            }
            finally
            {
                _receivers.Close(stream, StreamEnd.ClientGone);
            }
            if (stream.EndReason != StreamEnd.ClientGone && !call.CallAborted.IsCancellationRequested)
            {
                // Reset rather than end gracefully: a slow or stale peer may not read a final trailer for a long time.
                call.HttpContext.Abort();
            }
        }
    }

    private async Task FetchBodiesAsync(GrpcServerCall<BodyFetch, BodyFetchReply> call)
    {
        var request = await ReadFirstAsync(call).ConfigureAwait(false);
        // Decoding, the MAC check and the lookup all run here: the lookup reads the published read model, so a
        // flood of fetches never holds up execution.
        byte[]? answer = null;
        if (SieveReplicaApplication.AuthenticateBodyFetch(request.Canonical.Span, _replica, _ringForReceiver, out var ring, out _) is { } req)
        {
            if (_gate?.Answers(req.Receiver) == false)
            {
                await HoldUnansweredAsync(call).ConfigureAwait(false);
                return;
            }
            var found = _readModel().FindBodies(req);
            answer = BodyFetchCodec.EncodeResponse(_replica, req.Receiver, req.Nonce, found, ring!);
        }
        _metrics.BodyFetch(answer is not null);
        var reply = new BodyFetchReply { Canonical = answer is null ? ByteString.Empty : UnsafeByteOperations.UnsafeWrap(answer) };
        await call.WriteAsync(reply, ct: call.CallAborted).ConfigureAwait(false);
    }

    /// <summary>A fetch the gate withholds: no answer, no refusal, until the receiver gives up or the host stops.</summary>
    private async Task HoldUnansweredAsync(GrpcServerCall<BodyFetch, BodyFetchReply> call)
    {
        using var held = CancellationTokenSource.CreateLinkedTokenSource(call.CallAborted, _shutdown);
        try
        {
            await Task.Delay(Timeout.InfiniteTimeSpan, held.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // the receiver gave up, or the host is stopping
        }
        call.HttpContext.Abort();
    }

    private async Task AckResponsesAsync(GrpcServerCall<PreSqSubscription, AckResponseFrame> call)
    {
        var request = await ReadFirstAsync(call).ConfigureAwait(false);
        var preSq = _check.PreSq(request.Canonical.Memory);
        using var lease = _acks.Attach(preSq);
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(call.CallAborted, lease.Ended, _shutdown);
        try
        {
            var reader = lease.Reader;
            while (await reader.WaitToReadAsync(linked.Token).ConfigureAwait(false))
            {
                var wrote = false;
                while (reader.TryRead(out var frame))
                {
                    await call.WriteAsync(frame, flush: false, linked.Token).ConfigureAwait(false);
                    wrote = true;
                }
                if (wrote)
                {
                    await call.FlushAsync(linked.Token).ConfigureAwait(false);
                }
            }
        }
        catch (OperationCanceledException) when (!call.CallAborted.IsCancellationRequested)
        {
            call.HttpContext.Abort();
        }
    }

    private async Task HealthAsync(GrpcServerCall<HealthRequest, HealthReply> call)
    {
        await ReadFirstAsync(call).ConfigureAwait(false);
        await call.WriteAsync(_health(), ct: call.CallAborted).ConfigureAwait(false);
    }

    /// <summary>The fixed routes from a sender now (any thread); null when the replicas run signed rule sets.</summary>
    public Func<int, IReadOnlyList<SieveQ.Sieve.Replica.Route>>? SenderRoutes { get; init; }

    /// <summary>
    /// What this replica applied of one party's enrolment. Public keys and names only, which every party of the deployment
    /// holds anyway; a lookup reads the directory's published table and never waits for execution.
    /// </summary>
    private async Task EnrolmentAsync(GrpcServerCall<EnrolmentLookup, EnrolmentStanding> call)
    {
        var request = await ReadFirstAsync(call).ConfigureAwait(false);
        var standing = request.Party switch
        {
            EnrolmentParty.Sender when request.Id >= 0 => _enrolled.SenderStanding(request.Id),
            EnrolmentParty.Receiver when request.Id >= 0 => _enrolled.ReceiverStanding(request.Id),
            _ => throw new GrpcCallException(GrpcStatusCode.InvalidArgument, $"an enrolment lookup names a sender or a receiver and an id of 0 or more (got {request.Party}, {request.Id})"),
        };
        _metrics.EnrolmentLookup();
        var routes = request.Party == EnrolmentParty.Sender && SenderRoutes is { } from ? from(request.Id) : null;
        await call.WriteAsync(EnrolmentReplies.ToReply(standing, _readModel().EnrolmentVersion, routes), ct: call.CallAborted).ConfigureAwait(false);
    }

    /// <summary>The call's one request, within a time limit: an open stream that never says who it is holds a slot for nothing.</summary>
    private async Task<TRequest> ReadFirstAsync<TRequest, TResponse>(GrpcServerCall<TRequest, TResponse> call)
        where TRequest : class, IMessage<TRequest>
        where TResponse : class, IMessage<TResponse>
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(call.CallAborted, _shutdown);
        timeout.CancelAfter(_options.SubscriptionReadTimeout);
        try
        {
            return await call.ReadOneAsync(timeout.Token).ConfigureAwait(false)
                ?? throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "the call carried no request");
        }
        catch (OperationCanceledException) when (!call.CallAborted.IsCancellationRequested)
        {
            throw new GrpcCallException(GrpcStatusCode.DeadlineExceeded, "no request within the time limit");
        }
    }
}
