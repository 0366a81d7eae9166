using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Routing;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SenderFrame = SieveQ.Protocol.V1.SenderFrame;
using SieveQ.Transport;

namespace SieveQ.PreSq;

/// <summary>The gRPC service sieveq.v1.PreSq: Exchange for sender-SQs, Acknowledge for post-SQs, Health, SubmitRuleSetCommand and SubmitAdminCommand for operators.</summary>
internal sealed class PreSqEndpoints
{
    private const int HealthRequestBytes = 1024;

    private readonly PreSqHostOptions _options;
    private readonly SieveLoop _loop;
    private readonly SenderStreams _streams;
    private readonly PublicKeyDirectory _enrolled;
    private readonly PreSqMetrics _metrics;
    private readonly Func<HealthReply> _health;
    private readonly RuleSetCommandRelay _ruleSetCommands;
    private readonly AdminCommandRelay _adminCommands;
    private readonly IdLeaseRelay _idLeases;
    private readonly CancellationToken _shutdown;

    public PreSqEndpoints(PreSqHostOptions options, SieveLoop loop, SenderStreams streams, PublicKeyDirectory enrolled, PreSqMetrics metrics,
        Func<HealthReply> health, RuleSetCommandRelay ruleSetCommands, AdminCommandRelay adminCommands, IdLeaseRelay idLeases, CancellationToken shutdown)
    {
        _idLeases = idLeases;
        _adminCommands = adminCommands;
        _ruleSetCommands = ruleSetCommands;
        _options = options;
        _loop = loop;
        _streams = streams;
        _enrolled = enrolled;
        _metrics = metrics;
        _health = health;
        _shutdown = shutdown;
    }

    public void Map(IEndpointRouteBuilder routes)
    {
        routes.MapGrpcMethod<SenderFrame, PreSqEvent>(ProtocolNames.PreSqService, ProtocolNames.Exchange, SenderFrame.Parser, ExchangeAsync, _options.MaxMessageBytes);
        var unary = _options.UnaryRequestTimeout;
        routes.MapGrpcMethod<ReceiverAcknowledgement, AcknowledgementQueued>(ProtocolNames.PreSqService, ProtocolNames.Acknowledge, ReceiverAcknowledgement.Parser,
            AcknowledgeAsync, _options.MaxMessageBytes, unary);
        routes.MapGrpcMethod<HealthRequest, HealthReply>(ProtocolNames.PreSqService, ProtocolNames.Health, HealthRequest.Parser, HealthAsync, HealthRequestBytes, unary);
        routes.MapGrpcMethod<RuleSetCommandSubmission, RuleSetCommandOutcome>(ProtocolNames.PreSqService, ProtocolNames.SubmitRuleSetCommand,
            RuleSetCommandSubmission.Parser, SubmitRuleSetCommandAsync, RuleSetCommandRelay.MaxSubmissionBytes, unary);
        routes.MapGrpcMethod<AdminCommandSubmission, AdminCommandOutcome>(ProtocolNames.PreSqService, ProtocolNames.SubmitAdminCommand,
            AdminCommandSubmission.Parser, SubmitAdminCommandAsync, AdminCommandRelay.MaxSubmissionBytes, unary);
        routes.MapGrpcMethod<IdLeaseSubmission, IdLeaseOutcome>(ProtocolNames.PreSqService, ProtocolNames.SubmitIdLease,
            IdLeaseSubmission.Parser, SubmitIdLeaseAsync, IdLeaseRelay.MaxSubmissionBytes, unary);
    }

    private async Task SubmitIdLeaseAsync(GrpcServerCall<IdLeaseSubmission, IdLeaseOutcome> call)
    {
        var request = await call.ReadOneAsync(call.CallAborted).ConfigureAwait(false)
            ?? throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "no id lease request in the call");
        using var ct = CancellationTokenSource.CreateLinkedTokenSource(call.CallAborted, _shutdown);
        var result = await _idLeases.SubmitAsync(request.Canonical.Memory, ct.Token).ConfigureAwait(false);
        await call.WriteAsync(new IdLeaseOutcome { Canonical = Google.Protobuf.ByteString.CopyFrom(result) }, ct: call.CallAborted).ConfigureAwait(false);
    }

    private async Task SubmitAdminCommandAsync(GrpcServerCall<AdminCommandSubmission, AdminCommandOutcome> call)
    {
        var request = await call.ReadOneAsync(call.CallAborted).ConfigureAwait(false)
            ?? throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "no administrator command in the call");
        using var ct = CancellationTokenSource.CreateLinkedTokenSource(call.CallAborted, _shutdown);
        var result = await _adminCommands.SubmitAsync(request.Canonical.Memory, ct.Token).ConfigureAwait(false);
        await call.WriteAsync(new AdminCommandOutcome { Canonical = Google.Protobuf.ByteString.CopyFrom(result) }, ct: call.CallAborted).ConfigureAwait(false);
    }

    private async Task SubmitRuleSetCommandAsync(GrpcServerCall<RuleSetCommandSubmission, RuleSetCommandOutcome> call)
    {
        // A command may carry a rule set of several MiB, above the server-wide body limit sized for sender frames.
        if (call.HttpContext.Features.Get<IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } maxBody)
        {
            maxBody.MaxRequestBodySize = RuleSetCommandRelay.MaxSubmissionBytes + GrpcFraming.HeaderSize;
        }
        var request = await call.ReadOneAsync(call.CallAborted).ConfigureAwait(false)
            ?? throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "no rule-set command in the call");
        using var ct = CancellationTokenSource.CreateLinkedTokenSource(call.CallAborted, _shutdown);
        var result = await _ruleSetCommands.SubmitAsync(request.Canonical.Memory, ct.Token).ConfigureAwait(false);
        await call.WriteAsync(new RuleSetCommandOutcome { Canonical = Google.Protobuf.ByteString.CopyFrom(result) }, ct: call.CallAborted).ConfigureAwait(false);
    }

    private async Task ExchangeAsync(GrpcServerCall<SenderFrame, PreSqEvent> call)
    {
        var features = call.HttpContext.Features;
        // A sender's stream lives as long as the sender and is legitimately silent between bursts. Kestrel
        // times body reads while the handler waits for data, so the server-wide minimum rate would end an
        // idle but healthy stream (and, on HTTP/2, its whole connection). HTTP/2 only allows switching it
        // off per request, which is done here. What bounds this stream instead: it must authenticate (a
        // frame passing every check) within UnboundStreamTimeout; its buffered bytes are bounded by the
        // HTTP/2 stream window; the connections and streams behind it by the per-source, total and
        // per-connection limits; and a dead peer by HTTP/2 keep-alive pings.
        if (features.Get<IHttpMinRequestBodyDataRateFeature>() is { } minRate)
        {
            minRate.MinDataRate = null;
        }
        // The body of an endless stream has no total size; each message is bounded by MaxMessageBytes.
        if (features.Get<IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } maxBody)
        {
            maxBody.MaxRequestBodySize = null;
        }
        var stream = _streams.Open(_options.StreamQueueEvents, _options.UnboundStreamTimeout);
        using var reading = CancellationTokenSource.CreateLinkedTokenSource(call.CallAborted, stream.UnboundExpired, _shutdown);
        var pump = stream.PumpAsync(call, call.CallAborted);
        try
        {
            await foreach (var frame in call.ReadAllAsync(reading.Token).ConfigureAwait(false))
            {
                // Shed (and counted) when the loop is behind: a sender retransmits what is not acknowledged.
                _loop.TryPostFrame(frame.Canonical.Memory, stream);
            }
        }
        catch (OperationCanceledException) when (stream.UnboundExpired.IsCancellationRequested && !stream.EverBound && !call.CallAborted.IsCancellationRequested)
        {
            _metrics.StreamUnboundTimeout();
            throw new GrpcCallException(GrpcStatusCode.PermissionDenied, "no frame on this stream passed the pre-SQ's checks in time");
        }
        catch (OperationCanceledException) when (_shutdown.IsCancellationRequested && !call.CallAborted.IsCancellationRequested)
        {
            throw new GrpcCallException(GrpcStatusCode.Unavailable, "pre-SQ shutting down");
        }
        finally
        {
            _streams.Close(stream);
            try
            {
                await pump.ConfigureAwait(false);
            }
            catch (Exception e) when (e is OperationCanceledException or IOException or InvalidOperationException)
            {
                // The client went away with ACKRES still queued; they are lost and it will ask again.
            }
        }
    }

    private async Task AcknowledgeAsync(GrpcServerCall<ReceiverAcknowledgement, AcknowledgementQueued> call)
    {
        var request = await call.ReadOneAsync(call.CallAborted).ConfigureAwait(false)
            ?? throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "no acknowledgement in the call");
        ReceiverAck ack;
        try
        {
            ack = ReceiverAckCodec.Decode(request.Canonical.Memory);
        }
        catch (MalformedEnvelopeException e)
        {
            _metrics.ReceiverAckMalformed();
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, e.Message);
        }
        // The replicas check this signature too, but only after ordering; refusing a forged ack here keeps
        // it from taking ordering capacity, which is the point of a pre-SQ.
        if (!_enrolled.VerifyReceiver(ack.Receiver, TaggedHash.Concat(DomainTags.ReceiverAck, ack.SignedRegion.Span), ack.Signature.Span))
        {
            _metrics.ReceiverAckBadSignature();
            throw new GrpcCallException(GrpcStatusCode.Unauthenticated, "receiver acknowledgement: signature does not verify for an enrolled receiver");
        }
        var queued = _loop.TryPostReceiverAck(request.Canonical.Memory);
        if (queued)
        {
            _metrics.ReceiverAckQueued();
        }
        else
        {
            _metrics.ReceiverAckShed();
        }
        await call.WriteAsync(new AcknowledgementQueued { Queued = queued }, ct: call.CallAborted).ConfigureAwait(false);
    }

    private async Task HealthAsync(GrpcServerCall<HealthRequest, HealthReply> call)
    {
        _ = await call.ReadOneAsync(call.CallAborted).ConfigureAwait(false);
        await call.WriteAsync(_health(), ct: call.CallAborted).ConfigureAwait(false);
    }
}
