using System.Runtime.Versioning;
using System.Security.Principal;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Agent.Hosting;
using SieveQ.Agent.Identity;
using SieveQ.Agent.Services;
using SieveQ.Deployment;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Sdk.Sender;
using SieveQ.Transport;

namespace SieveQ.Firewall.WineCheck;

/// <summary>
/// The agent's named pipe with its caller check (issue 21): a Kestrel named-pipe listener built from the agent's own
/// pieces (ConnectedPeers' connection middleware, CallerPolicy, HealthService, as AgentHost wires them), called over
/// the pipe by this program with the transport's GrpcChannel. A full AgentHost needs a deployment whose keys
/// `deploy init` makes with ECDSA P-256, which Wine 8.0's CNG cannot create; the pipe, the middleware, the
/// identification and the policy are the agent's code all the same.
/// </summary>
internal sealed partial class Checks
{
    // Not this program's user, not LocalSystem: a stand-in for "the agent runs as someone else".
    private const string OtherAgentSid = "S-1-5-21-1111111111-2222222222-3333333333-1001";
    private const string OtherAllowedSid = "S-1-5-21-1111111111-2222222222-3333333333-1002";

    public async Task AgentPipeAsync()
    {
        string ownSid;
        using (var identity = WindowsIdentity.GetCurrent())
        {
            ownSid = identity.User?.Value ?? "";
        }
        string exe = Environment.ProcessPath ?? "";
        Console.WriteLine($"  agent pipe: this program is pid {Environment.ProcessId}, user {ownSid}, exe {exe}");

        await CheckAsync("agent pipe: the agent identifies its caller's pid, user SID and executable and reports them in Health", async () =>
        {
            await using var agent = await PipeAgent.StartAsync("sieveq-wine-pipecaller-own", ownSid, []).ConfigureAwait(false);
            using var channel = GrpcChannel.ForNamedPipe(agent.PipeName);
            var health = await channel.UnaryAsync(ProtocolNames.AgentService, ProtocolNames.Health, new HealthRequest(), HealthReply.Parser).ConfigureAwait(false);
            Console.WriteLine($"  agent pipe: Health detail \"{health.Detail}\"");
            return health.Component == "agent" &&
                   health.Counters["caller_pid"] == Environment.ProcessId &&
                   health.Detail.Contains($"caller_sid {ownSid}", StringComparison.Ordinal) &&
                   health.Detail.Contains($"exe {exe}", StringComparison.OrdinalIgnoreCase);
        }).ConfigureAwait(false);

        await CheckAsync("agent pipe: a caller whose SID is neither the agent's, LocalSystem nor allowed is refused with PermissionDenied", async () =>
        {
            if (ownSid == WindowsSid.LocalSystem)
            {
                throw new InvalidOperationException("this program runs as LocalSystem, which every agent allows");
            }
            await using var agent = await PipeAgent.StartAsync("sieveq-wine-pipecaller-other", OtherAgentSid, [OtherAllowedSid]).ConfigureAwait(false);
            using var channel = GrpcChannel.ForNamedPipe(agent.PipeName);
            try
            {
                await channel.UnaryAsync(ProtocolNames.AgentService, ProtocolNames.Health, new HealthRequest(), HealthReply.Parser).ConfigureAwait(false);
                return false;
            }
            catch (GrpcCallException e)
            {
                Console.WriteLine($"  agent pipe: refused: {e.Status}: {e.Message}");
                return e.Status == GrpcStatusCode.PermissionDenied && e.Message.Contains(ownSid, StringComparison.Ordinal) &&
                       e.Message.Contains($"pid {Environment.ProcessId} ", StringComparison.Ordinal);
            }
        }).ConfigureAwait(false);

        await CheckAsync("agent pipe: the same caller is served when the deployment's allowedSids lists its SID", async () =>
        {
            await using var agent = await PipeAgent.StartAsync("sieveq-wine-pipecaller-listed", OtherAgentSid, [OtherAllowedSid, ownSid.ToLowerInvariant()]).ConfigureAwait(false);
            using var channel = GrpcChannel.ForNamedPipe(agent.PipeName);
            var health = await channel.UnaryAsync(ProtocolNames.AgentService, ProtocolNames.Health, new HealthRequest(), HealthReply.Parser).ConfigureAwait(false);
            return health.Counters["caller_pid"] == Environment.ProcessId;
        }).ConfigureAwait(false);
    }

    /// <summary>The agent's listener as AgentHost.StartAsync builds it on Windows, with the agent's user SID given.</summary>
    [SupportedOSPlatform("windows")]
    private sealed class PipeAgent : IAsyncDisposable
    {
        private readonly WebApplication _app;

        private PipeAgent(WebApplication app, string pipeName)
        {
            _app = app;
            PipeName = pipeName;
        }

        public string PipeName { get; }

        public static async Task<PipeAgent> StartAsync(string pipeName, string agentSid, string[] allowedSids)
        {
            var entry = new AgentEntry { Name = "wine", Socket = "unused.sock", AllowedSids = allowedSids };
            var peers = new ConnectedPeers(NullLogger.Instance);
            var senders = new PartyRegistry<SieveQSender>(id => throw new InvalidOperationException($"no sender {id} in this check"));
            var receivers = new PartyRegistry<HostedReceiver>(id => throw new InvalidOperationException($"no receiver {id} in this check"));
            var agent = new AgentCallContext(entry, new CallerPolicy(entry, null, agentSid), peers, senders, receivers, NullLogger.Instance);
            var builder = WebApplication.CreateSlimBuilder();
            builder.Logging.ClearProviders();
            builder.WebHost.ConfigureKestrel(k =>
            {
                k.AddServerHeader = false;
                k.ListenNamedPipe(pipeName, o =>
                {
                    o.Protocols = HttpProtocols.Http2;
                    o.Use(peers.Middleware);
                });
            });
            var app = builder.Build();
            app.MapGrpcMethod<HealthRequest, HealthReply>(ProtocolNames.AgentService, ProtocolNames.Health, HealthRequest.Parser, call => HealthService.HandleAsync(agent, call));
            await app.StartAsync().ConfigureAwait(false);
            return new PipeAgent(app, pipeName);
        }

        public async ValueTask DisposeAsync()
        {
            await _app.StopAsync().ConfigureAwait(false);
            await _app.DisposeAsync().ConfigureAwait(false);
        }
    }
}
