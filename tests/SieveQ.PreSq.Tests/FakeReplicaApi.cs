using System.Collections.Concurrent;
using System.Net;
using System.Threading.Channels;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Logging;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Sieve.Envelope;
using SieveQ.Deployment;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.PreSq.Tests;

/// <summary>
/// Stands in for the replica-SQs' gRPC API (being built elsewhere): serves sieveq.v1.ReplicaSq/AckResponses
/// on every replica's ApiUrl, checks each subscription as a replica would (signature by the pre-SQ's
/// ordering-client key, addressed to that replica, fresh), and streams whatever a test pushes.
/// </summary>
internal sealed class FakeReplicaApi : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly ConcurrentDictionary<(int Replica, int PreSq), Channel<AckResponseFrame>> _outboxes = new();

    private FakeReplicaApi(WebApplication app) => _app = app;

    /// <summary>Valid subscriptions received, by (replica, pre-SQ).</summary>
    public ConcurrentDictionary<(int Replica, int PreSq), int> Subscriptions { get; } = new();

    public int InvalidSubscriptions;

    public static async Task<FakeReplicaApi> StartAsync(DeploymentContext deployment)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k =>
        {
            foreach (var r in deployment.Config.Replicas)
            {
                var url = new Uri(r.ApiUrl);
                // The replica's own certificate, so the pre-SQ's pinned TLS client accepts this stand-in.
                var certificate = DeploymentTls.ServerCertificate(deployment.Config, PartyRole.Replica, r.Id, r.ApiUrl, r.Pin());
                k.Listen(IPAddress.Parse(url.Host), url.Port, o =>
                {
                    o.Protocols = HttpProtocols.Http2;
                    if (certificate is not null)
                    {
                        o.UseHttps(certificate);
                    }
                });
            }
        });
        var app = builder.Build();
        var api = new FakeReplicaApi(app);
        app.MapGrpcMethod<PreSqSubscription, AckResponseFrame>(ProtocolNames.ReplicaSqService, ProtocolNames.AckResponses, PreSqSubscription.Parser, async call =>
        {
            var request = await call.ReadOneAsync(call.CallAborted) ?? throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "no subscription");
            var s = SubscriptionCodec.Decode(request.Canonical.Memory, StructureKind.PreSqSubscription);
            var port = call.HttpContext.Connection.LocalPort;
            var replica = deployment.Config.Replicas.Single(r => new Uri(r.ApiUrl).Port == port).Id;
            using var key = IdentityKey.ImportPublic(deployment.Cluster.Client(s.Subscriber).PublicKey);
            var now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
            if (!SubscriptionCodec.IsValid(s, replica, now, 30_000, (data, sig) => key.VerifyData(data.Span, sig.Span, System.Security.Cryptography.HashAlgorithmName.SHA256)))
            {
                Interlocked.Increment(ref api.InvalidSubscriptions);
                throw new GrpcCallException(GrpcStatusCode.PermissionDenied, "bad subscription");
            }
            api.Subscriptions.AddOrUpdate((replica, s.Subscriber), 1, (_, n) => n + 1);
            var outbox = api._outboxes.GetOrAdd((replica, s.Subscriber), _ => Channel.CreateUnbounded<AckResponseFrame>());
            await foreach (var frame in outbox.Reader.ReadAllAsync(call.CallAborted))
            {
                await call.WriteAsync(frame, ct: call.CallAborted);
            }
        });
        await app.StartAsync();
        return api;
    }

    public void Push(int replica, int preSq, AckResponseFrame frame) =>
        _outboxes.GetOrAdd((replica, preSq), _ => Channel.CreateUnbounded<AckResponseFrame>()).Writer.TryWrite(frame);

    public async ValueTask DisposeAsync()
    {
        foreach (var o in _outboxes.Values)
        {
            o.Writer.TryComplete();
        }
        await _app.StopAsync();
        await _app.DisposeAsync();
    }
}
