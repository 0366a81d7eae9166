using System.Collections.Concurrent;
using System.Diagnostics;
using System.Net;
using Google.Protobuf;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.PreSq;
using SieveQ.Deployment;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Transport;
using SenderFrame = SieveQ.Protocol.V1.SenderFrame;

namespace SieveQ.Sdk.Tests.Fakes;

/// <summary>
/// The pre-SQs and replica-SQs of a deployment as one Kestrel server with one loopback port per
/// component (a call is routed by the port it arrived on). Pre-SQs run the real <see cref="PreSqFilter"/>
/// and forward what passes into the <see cref="FakeCluster"/>; replica-SQs serve its outputs.
/// </summary>
internal sealed class FakeSieveServer : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly Dictionary<int, int> _replicaByPort = [];
    private readonly Dictionary<int, int> _preSqByPort = [];
    private readonly Dictionary<int, (PreSqFilter Filter, PartyKeys Keys)> _filters = [];
    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private PublicKeyDirectory? _enrolment;

    private FakeSieveServer(WebApplication app, FakeCluster cluster)
    {
        _app = app;
        Cluster = cluster;
    }

    public FakeCluster Cluster { get; }
    public IReadOnlyDictionary<int, Uri> ReplicaUrls { get; private set; } = new Dictionary<int, Uri>();
    public IReadOnlyDictionary<int, Uri> PreSqUrls { get; private set; } = new Dictionary<int, Uri>();

    /// <summary>Pre-SQs that read frames and do nothing with them (a crashed or dropping pre-SQ).</summary>
    public ConcurrentDictionary<int, bool> BlackHoles { get; } = new();

    /// <summary>Per pre-SQ: frames received, frames that passed its checks (MAC included), sender messages among those, acknowledgements queued.</summary>
    public ConcurrentDictionary<int, long> FramesReceived { get; } = new();
    public ConcurrentDictionary<int, long> FramesPassed { get; } = new();
    public ConcurrentDictionary<int, long> MessagesPassed { get; } = new();
    public ConcurrentDictionary<int, long> AcknowledgementsQueued { get; } = new();

    /// <summary>
    /// Per replica-SQ, what it answers an enrolment lookup instead of the deployment's enrolment (a faulty or lagging
    /// replica); a null answer is no answer at all (the call is held until the client gives up).
    /// </summary>
    public ConcurrentDictionary<int, Func<EnrolmentLookup, EnrolmentStanding?>> EnrolmentAnswers { get; } = new();

    /// <summary>Enrolment lookups each replica-SQ was asked.</summary>
    public ConcurrentDictionary<int, long> EnrolmentLookups { get; } = new();

    /// <summary>What a pre-SQ's filter dropped, by check and reason.</summary>
    public Sieve.Filtering.DropCounters DropsAt(int preSq) => _filters[preSq].Filter.Drops;

    public static async Task<FakeSieveServer> StartAsync(DeploymentContext ctx, IReadOnlyList<int> replicaIds, IReadOnlyList<int> preSqIds, FakeCluster cluster)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        var count = replicaIds.Count + preSqIds.Count;
        builder.WebHost.ConfigureKestrel(k =>
        {
            for (var i = 0; i < count; i++)
            {
                k.Listen(IPAddress.Loopback, 0, o => o.Protocols = HttpProtocols.Http2);
            }
        });
        var app = builder.Build();
        var server = new FakeSieveServer(app, cluster);
        foreach (var p in preSqIds)
        {
            var keys = ctx.Keys(PartyRole.PreSq, p);
            server._filters[p] = (new PreSqFilter(p, new PreSqOptions(), new SenderWhitelist(ctx.Enrolment.Senders.Select(s => s.Id)), s => keys.Ring(MacChannel.SenderPreSq, s)), keys);
        }
        app.MapGrpcMethod<SenderFrame, PreSqEvent>(ProtocolNames.PreSqService, ProtocolNames.Exchange, SenderFrame.Parser, server.ExchangeAsync);
        app.MapGrpcMethod<ReceiverAcknowledgement, AcknowledgementQueued>(ProtocolNames.PreSqService, ProtocolNames.Acknowledge, ReceiverAcknowledgement.Parser, server.AcknowledgeAsync);
        app.MapGrpcMethod<ReceiverSubscription, ReplicaOutputFrame>(ProtocolNames.ReplicaSqService, ProtocolNames.Subscribe, ReceiverSubscription.Parser, server.SubscribeAsync);
        app.MapGrpcMethod<BodyFetch, BodyFetchReply>(ProtocolNames.ReplicaSqService, ProtocolNames.FetchBodies, BodyFetch.Parser, server.FetchBodiesAsync);
        app.MapGrpcMethod<IdLeaseSubmission, IdLeaseOutcome>(ProtocolNames.PreSqService, ProtocolNames.SubmitIdLease, IdLeaseSubmission.Parser, server.SubmitIdLeaseAsync);
        app.MapGrpcMethod<EnrolmentLookup, EnrolmentStanding>(ProtocolNames.ReplicaSqService, ProtocolNames.Enrolment, EnrolmentLookup.Parser, server.EnrolmentAsync);
        server._enrolment = new PublicKeyDirectory(ctx.Enrolment);
        await app.StartAsync();
        var ports = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Select(a => new Uri(a).Port).ToList();
        var replicaUrls = new Dictionary<int, Uri>();
        var preSqUrls = new Dictionary<int, Uri>();
        for (var i = 0; i < count; i++)
        {
            var url = new Uri($"http://127.0.0.1:{ports[i]}");
            if (i < replicaIds.Count)
            {
                server._replicaByPort[ports[i]] = replicaIds[i];
                replicaUrls[replicaIds[i]] = url;
            }
            else
            {
                server._preSqByPort[ports[i]] = preSqIds[i - replicaIds.Count];
                preSqUrls[preSqIds[i - replicaIds.Count]] = url;
            }
        }
        server.ReplicaUrls = replicaUrls;
        server.PreSqUrls = preSqUrls;
        return server;
    }

    private int PreSqOf<TReq, TRes>(GrpcServerCall<TReq, TRes> call)
        where TReq : class, IMessage<TReq>
        where TRes : class, IMessage<TRes> =>
        _preSqByPort.TryGetValue(call.HttpContext.Connection.LocalPort, out var p) ? p : throw new GrpcCallException(GrpcStatusCode.Unimplemented, "not a pre-SQ port");

    private int ReplicaOf<TReq, TRes>(GrpcServerCall<TReq, TRes> call)
        where TReq : class, IMessage<TReq>
        where TRes : class, IMessage<TRes> =>
        _replicaByPort.TryGetValue(call.HttpContext.Connection.LocalPort, out var r) ? r : throw new GrpcCallException(GrpcStatusCode.Unimplemented, "not a replica-SQ port");

    /// <summary>Id lease requests each pre-SQ was asked to order; a pre-SQ in <see cref="BlackHoles"/> holds them unanswered.</summary>
    public ConcurrentDictionary<int, long> IdLeaseRequests { get; } = new();

    /// <summary>Lease requests every pre-SQ holds unanswered (a holder cut off from the deployment).</summary>
    public Func<IdLeaseRequest, bool>? DropIdLease { get; set; }

    /// <summary>Ordered straight into the cluster (the real pre-SQ's own checks are the replicas' checks, tested with it).</summary>
    private async Task SubmitIdLeaseAsync(GrpcServerCall<IdLeaseSubmission, IdLeaseOutcome> call)
    {
        var preSq = PreSqOf(call);
        var request = await call.ReadOneAsync(call.CallAborted) ?? throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "no lease request");
        IdLeaseRequests.AddOrUpdate(preSq, 1, (_, n) => n + 1);
        if (BlackHoles.ContainsKey(preSq) || DropIdLease?.Invoke(IdLeaseCodec.DecodeRequest(request.Canonical.Memory)) == true)
        {
            await Task.Delay(Timeout.InfiniteTimeSpan, call.CallAborted).ContinueWith(_ => { }, TaskScheduler.Default);
            return;
        }
        var result = Cluster.OrderCommand(preSq, request.Canonical.Memory);
        await call.WriteAsync(new IdLeaseOutcome { Canonical = ByteString.CopyFrom(result) }, ct: call.CallAborted);
    }

    /// <summary>The deployment's enrolment as a replica-SQ reads it (the real directory), unless the test overrides the replica.</summary>
    private async Task EnrolmentAsync(GrpcServerCall<EnrolmentLookup, EnrolmentStanding> call)
    {
        var replica = ReplicaOf(call);
        var lookup = await call.ReadOneAsync(call.CallAborted) ?? throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "no lookup");
        EnrolmentLookups.AddOrUpdate(replica, 1, (_, n) => n + 1);
        var answer = EnrolmentAnswers.TryGetValue(replica, out var instead) ? instead(lookup) : StandingOf(lookup);
        if (answer is null)
        {
            await Task.Delay(Timeout.InfiniteTimeSpan, call.CallAborted).ContinueWith(_ => { }, TaskScheduler.Default);
            return;
        }
        await call.WriteAsync(answer, ct: call.CallAborted);
    }

    /// <summary>What a replica-SQ answers, by the replica's own mapping.</summary>
    public EnrolmentStanding StandingOf(EnrolmentLookup lookup) => lookup.Party == EnrolmentParty.Sender
        ? SieveQ.ReplicaSq.EnrolmentReplies.ToReply(_enrolment!.SenderStanding(lookup.Id), 0, Cluster.SenderRoutes(lookup.Id))
        : SieveQ.ReplicaSq.EnrolmentReplies.ToReply(_enrolment!.ReceiverStanding(lookup.Id), 0);

    private async Task ExchangeAsync(GrpcServerCall<SenderFrame, PreSqEvent> call)
    {
        var preSq = PreSqOf(call);
        var (filter, _) = _filters[preSq];
        Task? relay = null;
        await foreach (var frame in call.ReadAllAsync())
        {
            FramesReceived.AddOrUpdate(preSq, 1, (_, n) => n + 1);
            if (BlackHoles.ContainsKey(preSq))
            {
                continue;
            }
            PreSqVerdict verdict;
            lock (filter)
            {
                verdict = filter.Inspect(frame.Canonical.Memory, _clock.ElapsedMilliseconds);
            }
            if (!verdict.Passed)
            {
                continue;
            }
            FramesPassed.AddOrUpdate(preSq, 1, (_, n) => n + 1);
            if (verdict.Kind == StructureKind.SenderMessage)
            {
                MessagesPassed.AddOrUpdate(preSq, 1, (_, n) => n + 1);
            }
            // The stream is bound to the first sender that passes; its ACKRES come back on it.
            relay ??= RelayAsync(call, Cluster.AttachSender(preSq, verdict.Sender));
            Cluster.Order(preSq, verdict.Body);
        }
        if (relay is not null)
        {
            await relay;
        }
    }

    private static async Task RelayAsync(GrpcServerCall<SenderFrame, PreSqEvent> call, System.Threading.Channels.ChannelReader<byte[]> ackResponses)
    {
        try
        {
            await foreach (var bytes in ackResponses.ReadAllAsync(call.CallAborted))
            {
                await call.WriteAsync(new PreSqEvent { AckResponse = ByteString.CopyFrom(bytes) }, ct: call.CallAborted);
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    private async Task AcknowledgeAsync(GrpcServerCall<ReceiverAcknowledgement, AcknowledgementQueued> call)
    {
        var preSq = PreSqOf(call);
        var ack = await call.ReadOneAsync() ?? throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "no acknowledgement");
        if (BlackHoles.ContainsKey(preSq))
        {
            throw new GrpcCallException(GrpcStatusCode.Unavailable, "down");
        }
        AcknowledgementsQueued.AddOrUpdate(preSq, 1, (_, n) => n + 1);
        Cluster.Order(preSq, ack.Canonical.Memory);
        await call.WriteAsync(new AcknowledgementQueued { Queued = true });
    }

    private async Task SubscribeAsync(GrpcServerCall<ReceiverSubscription, ReplicaOutputFrame> call)
    {
        var replica = ReplicaOf(call);
        var request = await call.ReadOneAsync() ?? throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "no subscription");
        Subscription s;
        try
        {
            s = SubscriptionCodec.Decode(request.Canonical.Memory, StructureKind.ReceiverSubscription);
        }
        catch (MalformedEnvelopeException e)
        {
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, e.Message);
        }
        if (!Cluster.VerifySubscription(s, replica))
        {
            throw new GrpcCallException(GrpcStatusCode.PermissionDenied, "subscription refused");
        }
        var outputs = Cluster.Subscribe(replica, s.Subscriber);
        try
        {
            await foreach (var bytes in outputs.ReadAllAsync(call.CallAborted))
            {
                await call.WriteAsync(new ReplicaOutputFrame { Canonical = ByteString.CopyFrom(bytes) }, ct: call.CallAborted);
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    private async Task FetchBodiesAsync(GrpcServerCall<BodyFetch, BodyFetchReply> call)
    {
        var replica = ReplicaOf(call);
        var request = await call.ReadOneAsync() ?? throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "no request");
        var answer = Cluster.FetchBodies(replica, request.Canonical.Memory);
        await call.WriteAsync(new BodyFetchReply { Canonical = ByteString.CopyFrom(answer) });
    }

    public async ValueTask DisposeAsync()
    {
        await _app.StopAsync();
        await _app.DisposeAsync();
        _enrolment?.Dispose();
        foreach (var (_, keys) in _filters.Values)
        {
            keys.Dispose();
        }
    }
}
