using SieveQ.Policy.Hosting;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Agent.Identity;
using SieveQ.Agent.Services;
using SieveQ.Deployment;
using SieveQ.Firewall.Enforcement;
using SieveQ.Firewall.QGuard;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Sender;
using SieveQ.Transport;

namespace SieveQ.Agent.Hosting;

/// <summary>
/// The agent process's core: serves sieveq.v1.Agent on a Unix socket (HTTP/2 only; a named pipe on
/// Windows) to local applications, identified by the kernel's peer credentials (the pipe client's process and SID on Windows), and hosts the
/// sender-SQs and post-SQs of the identities its deployment entry lists, each created on first use.
/// Ready once <see cref="StartAsync"/> returns: `sieveq agent` runs it in the generic host, which tells systemd
/// (READY=1, STOPPING=1, the watchdog) or the Windows service control manager.
/// </summary>
public sealed class AgentHost : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly PartyRegistry<SieveQSender> _senders;
    private readonly PartyRegistry<HostedReceiver> _receivers;
    private readonly ILogger _log;
    private readonly FirewallEnforcer? _firewall;
    private readonly PublishedRuleSetFollower? _ruleSets;
    private int _stopped;

    private AgentHost(WebApplication app, string endpoint, AgentEntry entry, PartyRegistry<SieveQSender> senders, PartyRegistry<HostedReceiver> receivers, ILogger log,
        FirewallEnforcer? firewall, PublishedRuleSetFollower? ruleSets)
    {
        _app = app;
        _firewall = firewall;
        _ruleSets = ruleSets;
        Endpoint = endpoint;
        Entry = entry;
        _senders = senders;
        _receivers = receivers;
        _log = log;
    }

    /// <summary>The Unix socket path (pipe name on Windows) applications connect to.</summary>
    public string Endpoint { get; }

    public AgentEntry Entry { get; }

    public static async Task<AgentHost> StartAsync(DeploymentContext ctx, string name, string? stateDir = null, ILoggerFactory? logs = null, AgentHostOptions? options = null, CancellationToken ct = default)
    {
        ArgumentNullException.ThrowIfNull(ctx);
        options ??= new AgentHostOptions();
        logs ??= NullLoggerFactory.Instance;
        var log = logs.CreateLogger("SieveQ.Agent");
        var entry = ctx.Config.Agent(name);
        stateDir ??= Path.Combine(ctx.Config.Resolve(ctx.Config.DataDirectory), $"agent-{name}");
        var endpoint = options.Endpoint ?? (OperatingSystem.IsWindows() ? $"sieveq-agent-{name}" : ctx.Config.Resolve(entry.Socket));
        var receiverOptions = options.Receiver with { AutoCommitEvery = 0, AutoCommitAfter = TimeSpan.Zero };
        var clients = ctx.ToClientConfiguration();
        clients = clients with { ConnectTimeout = options.ConnectTimeout ?? clients.ConnectTimeout };

        var senderLog = logs.CreateLogger("SieveQ.Agent.Sender");
        var receiverLog = logs.CreateLogger("SieveQ.Agent.Receiver");
        var senders = new PartyRegistry<SieveQSender>(id => HostedParty.StartAsync(
            "sender", id, senderLog,
            () => SieveQSender.ConnectAsync(clients, id, Path.Combine(stateDir, "senders"), options.Sender, senderLog),
            () => SieveQSender.Create(clients, id, Path.Combine(stateDir, "senders"), options.Sender, senderLog),
            s => s.TakeLeaseWhenReachableAsync(clients, Path.Combine(stateDir, "senders"), options.LeaseRetryEvery, senderLog)));
        var receivers = new PartyRegistry<HostedReceiver>(async id => new HostedReceiver(
            await HostedParty.StartAsync(
                "receiver", id, receiverLog,
                () => SieveQReceiver.ConnectAsync(clients, id, Path.Combine(stateDir, "receivers"), receiverOptions, receiverLog),
                () => SieveQReceiver.Create(clients, id, Path.Combine(stateDir, "receivers"), receiverOptions, receiverLog),
                r => r.TakeLeaseWhenReachableAsync(clients, Path.Combine(stateDir, "receivers"), options.LeaseRetryEvery, receiverLog)).ConfigureAwait(false),
            options.MaxUncommittedDeliveries));
        var peers = new ConnectedPeers(log);
        var firewall = options.Firewall is null ? null : StartFirewall(options.Firewall, options.Policy, peers, senders, receivers, logs);
        var ruleSets = options.Policy is null ? null : FollowRuleSets(ctx.Config, options.Policy, options.RuleSetPollInterval, logs);
        var agent = new AgentCallContext(entry, new CallerPolicy(entry, PeerCredentials.CurrentUid(), OperatingSystem.IsWindows() ? NamedPipeCaller.CurrentUserSid() : null), peers, senders, receivers, log) { Firewall = firewall, RuleSets = ruleSets };

        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.Services.AddSingleton(logs);
        builder.Services.Configure<ConsoleLifetimeOptions>(o => o.SuppressStatusMessages = true);
        builder.WebHost.ConfigureKestrel(k =>
        {
            k.AddServerHeader = false;
            if (OperatingSystem.IsWindows())
            {
                k.ListenNamedPipe(endpoint, o =>
                {
                    o.Protocols = HttpProtocols.Http2;
                    o.Use(peers.Middleware);
                });
            }
            else
            {
                k.ListenUnixSocket(endpoint, o =>
                {
                    o.Protocols = HttpProtocols.Http2;
                    o.Use(peers.Middleware);
                });
            }
        });
        var app = builder.Build();
        app.MapGrpcMethod<AppSend, SendProgress>(ProtocolNames.AgentService, ProtocolNames.Send, AppSend.Parser, call => SendService.HandleAsync(agent, call));
        app.MapGrpcMethod<ReceiveControl, AppDelivery>(ProtocolNames.AgentService, ProtocolNames.Receive, ReceiveControl.Parser, call => ReceiveService.HandleAsync(agent, call));
        app.MapGrpcMethod<HealthRequest, HealthReply>(ProtocolNames.AgentService, ProtocolNames.Health, HealthRequest.Parser, call => HealthService.HandleAsync(agent, call));

        if (!OperatingSystem.IsWindows())
        {
            AgentEndpoint.ClearStale(endpoint);
        }
        if (firewall is not null)
        {
            await firewall.StartAsync(ct).ConfigureAwait(false);
        }
        await app.StartAsync(ct).ConfigureAwait(false);
        if (!OperatingSystem.IsWindows())
        {
            AgentEndpoint.Restrict(endpoint);
        }
        var host = new AgentHost(app, endpoint, entry, senders, receivers, log, firewall, ruleSets);
        ruleSets?.Start();
        host.Announce(stateDir);
        return host;
    }

    private static FirewallEnforcer StartFirewall(FirewallOptions options, PolicyMonitor? policy, ConnectedPeers peers,
        PartyRegistry<SieveQSender> senders, PartyRegistry<HostedReceiver> receivers, ILoggerFactory logs)
    {
        var (bridge, unavailable) = DriverBridgeSelection.TryOpen(options, logs);
        // The agent's own queues: messages not yet acknowledged by the sieve, deliveries not yet committed.
        long Queued() => senders.Started.Sum(s => (long)s.Party.Stats.Outstanding) + receivers.Started.Sum(r => (long)r.Party.Uncommitted);
        var sampler = new HostLoadSampler(HostLoadSampler.DefaultCpuMeter(), Queued, () => peers.Accepted);
        return new FirewallEnforcer(bridge, unavailable, policy, sampler, options, logs);
    }

    /// <summary>
    /// Group Policy's rule-set location: checked now, on every policy change and every poll interval. The
    /// policy monitor only raises Applied for a complete, validated policy, so a refused edit keeps following
    /// the last good location.
    /// </summary>
    private static PublishedRuleSetFollower FollowRuleSets(DeploymentConfig config, PolicyMonitor policy, TimeSpan pollInterval, ILoggerFactory logs)
    {
        var follower = new PublishedRuleSetFollower(config, logs.CreateLogger("SieveQ.Agent.RuleSets"), pollInterval: pollInterval);
        policy.Applied += (_, e) => follower.Follow(e.Applied.Policy.RuleSet?.Location, e.Applied.Policy.RuleSet?.SignerSpki);
        var current = policy.Policy.RuleSet;
        follower.Follow(current?.Location, current?.SignerSpki);
        return follower;
    }

    private void Announce(string stateDir)
    {
        _log.LogInformation("agent '{Name}' listening on {Endpoint} (senders [{Senders}], receivers [{Receivers}], state {State})",
            Entry.Name, Endpoint, string.Join(",", Entry.Senders), string.Join(",", Entry.Receivers), stateDir);
    }

    /// <summary>Completes when the host is asked to stop (SIGTERM, Ctrl-C) or <paramref name="ct"/> is cancelled.</summary>
    public Task WaitForShutdownAsync(CancellationToken ct = default) => _app.WaitForShutdownAsync(ct);

    public async Task StopAsync()
    {
        if (Interlocked.Exchange(ref _stopped, 1) == 1)
        {
            return;
        }
        _log.LogInformation("agent '{Name}' stopping", Entry.Name);
        await _app.StopAsync().ConfigureAwait(false);
        if (_firewall is not null)
        {
            await _firewall.DisposeAsync().ConfigureAwait(false);
        }
        if (_ruleSets is not null)
        {
            await _ruleSets.DisposeAsync().ConfigureAwait(false);
        }
        await _senders.DisposeAsync().ConfigureAwait(false);
        await _receivers.DisposeAsync().ConfigureAwait(false);
        if (!OperatingSystem.IsWindows())
        {
            AgentEndpoint.Remove(Endpoint);
        }
    }

    public async ValueTask DisposeAsync()
    {
        await StopAsync().ConfigureAwait(false);
        await _app.DisposeAsync().ConfigureAwait(false);
    }
}
