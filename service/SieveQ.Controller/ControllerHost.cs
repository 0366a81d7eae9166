using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.Logging;
using SieveQ.Controller.Access;
using SieveQ.Controller.Audit;
using SieveQ.Controller.Orchestration;
using SieveQ.Controller.Replicas;
using SieveQ.Controller.RuleSets;
using SieveQ.Deployment;
using SieveQ.Transport.Hardening;

namespace SieveQ.Controller;

public sealed record ControllerHostOptions
{
    public CallerAuthenticatorOptions Authentication { get; init; } = new();
    public AuditLogOptions Audit { get; init; } = new();
    public int MaxConnectionsPerSource { get; init; } = 16;

    /// <summary>Faults the replica-SQs tolerate: the controller acts on a replica notice once f+1 replicas reported it.</summary>
    public int ReplicaFaults { get; init; } = 1;

    /// <summary>Automatic replacements of one pre-SQ allowed within <see cref="ReplacementWindow"/>; beyond, an alarm and nothing done.</summary>
    public int MaxReplacements { get; init; } = 3;
    public TimeSpan ReplacementWindow { get; init; } = TimeSpan.FromMinutes(10);
    public TimeProvider Time { get; init; } = TimeProvider.System;

    /// <summary>How long a replica recovery waits for the replica to catch up, and for a quorum before each step of a round.</summary>
    public ReplicaRecoveryOptions Recovery { get; init; } = new();

    /// <summary>A proactive recovery round this often (<see cref="ProactiveRecoveryRounds"/>); null: only when asked.</summary>
    public TimeSpan? RecoveryRoundEvery { get; init; }

    /// <summary>A management endpoint has a handful of callers: small limits keep a flood from costing much.</summary>
    public KestrelLimits KestrelLimits { get; init; } = new()
    {
        MaxConnections = 256,
        KeepAliveTimeout = TimeSpan.FromSeconds(60),
        RequestHeadersTimeout = TimeSpan.FromSeconds(10),
        MaxStreamsPerConnection = 16,
        MaxMessageBytes = ManagementApi.MaxRuleSetRequestBytes,
        KeepAlivePingDelay = TimeSpan.FromSeconds(30),
        KeepAlivePingTimeout = TimeSpan.FromSeconds(20),
        MaxRequestHeadersTotalBytes = 16 * 1024,
        MaxRequestHeaderCount = 32,
        MaxRequestHeaderFieldBytes = 8 * 1024,
    };
}

/// <summary>
/// The controller process's core: opens (and verifies) the audit log, pins the callers of <c>controller.json</c>, and
/// serves the <see cref="ManagementApi"/> on the hardened Kestrel HTTP/2 listener at the configured URL.
/// </summary>
public sealed class ControllerHost : IAsyncDisposable
{
    private readonly WebApplication _web;

    private readonly CallerAuthenticator _authenticator;
    private IDisposable? _commandKey;

    private readonly IComponentOrchestrator? _orchestrator;

    private readonly ProactiveRecoveryRounds? _rounds;

    private ControllerHost(WebApplication web, CallerAuthenticator authenticator, AuditLog audit, Uri url, PreSqReplacement replacement, IComponentOrchestrator? orchestrator,
        ProactiveRecoveryRounds? rounds)
    {
        _web = web;
        _rounds = rounds;
        _authenticator = authenticator;
        Audit = audit;
        Url = url;
        Replacement = replacement;
        _orchestrator = orchestrator;
    }

    public AuditLog Audit { get; }

    /// <summary>Acts on the replicas' f+1 notices that a pre-SQ is suspected.</summary>
    public PreSqReplacement Replacement { get; }
    public Uri Url { get; }

    /// <summary>
    /// Builds the host. <paramref name="probe"/> answers Status (normally <see cref="DeploymentHealth.ProbeAllAsync"/>
    /// over the deployment); <paramref name="auditDirectory"/> is where the log lives; <paramref name="orchestrator"/>
    /// (owned: disposed with the host) starts and stops components, none when null.
    /// </summary>
    public static ControllerHost Create(Uri url, IReadOnlyList<PinnedCaller> callers, string auditDirectory,
        Func<CancellationToken, Task<IReadOnlyList<ComponentHealth>>> probe, ILoggerFactory logs, ControllerHostOptions? options = null,
        AdminCommandSubmitter? commands = null, X509Certificate2? certificate = null, RuleSetDesk? ruleSets = null, IComponentOrchestrator? orchestrator = null,
        IReplicaProgressSource? replicaProgress = null)
    {
        ArgumentNullException.ThrowIfNull(url);
        options ??= new ControllerHostOptions();
        var audit = AuditLog.Open(auditDirectory, options.Audit);
        CallerAuthenticator? authenticator = null;
        try
        {
            authenticator = new CallerAuthenticator(callers, options.Authentication);
            var orchestration = new AuditedOrchestration(orchestrator, audit);
            var replacement = new PreSqReplacement(orchestration, new ReplacementBudget(options.MaxReplacements, options.ReplacementWindow, options.Time),
                logs.CreateLogger<PreSqReplacement>());
            var recovery = new ReplicaRecovery(orchestration, replicaProgress, options.Recovery, logs.CreateLogger<ReplicaRecovery>());
            var api = new ManagementApi(authenticator, audit, probe, commands, ruleSets: ruleSets, orchestration: orchestration, recovery: recovery);
            var web = HardenedWebApplication.CreateBuilder(typeof(ControllerHost).Assembly, logs, url, options.KestrelLimits,
                new SourceConnectionLimiter(options.MaxConnectionsPerSource), new PrefaceDeadline(options.KestrelLimits.RequestHeadersTimeout), certificate);
            var app = web.Build();
            api.Map(app);
            new ReplicaNoticeEndpoint(authenticator, audit, new ReplicaNoticeTally(options.ReplicaFaults, options.Time), replacement: replacement).Map(app);
            var rounds = options.RecoveryRoundEvery is { } every
                ? new ProactiveRecoveryRounds(recovery, every, options.Time, logs.CreateLogger<ProactiveRecoveryRounds>())
                : null;
            return new ControllerHost(app, authenticator, audit, url, replacement, orchestrator, rounds);
        }
        catch
        {
            authenticator?.Dispose();
            audit.Dispose();
            throw;
        }
    }

    /// <summary>The controller of a deployment directory: its controller.json, its audit log, health probes of its components.</summary>
    public static ControllerHost ForDeployment(string deploymentDirectory, ILoggerFactory logs, ControllerHostOptions? options = null,
        IComponentOrchestrator? orchestrator = null)
    {
        var deployment = DeploymentFile.Load(deploymentDirectory);
        var cfg = ControllerConfig.Load(deployment.BaseDirectory);
        options ??= new ControllerHostOptions();
        options = options with
        {
            Audit = options.Audit with { MaxFileBytes = cfg.MaxAuditFileBytes },
            ReplicaFaults = deployment.F,
            RecoveryRoundEvery = cfg.RecoveryRoundEveryMinutes is { } minutes ? TimeSpan.FromMinutes(minutes) : options.RecoveryRoundEvery,
        };
        var key = cfg.CommandKeyFile is { } file ? ManagementKeyFile.Read(deployment.Resolve(file)) : null;
        try
        {
            var commands = key is null ? null : new AdminCommandSubmitter(deployment, key);
            var certificate = DeploymentTls.ServerCertificate(deployment.Resolve(deployment.KeyDirectory), ControllerConfig.TlsFileStem, cfg.Url, cfg.Pin());
            var ruleSets = new RuleSetDesk(commands, InitialArchive(deployment, cfg, logs), cfg.RequireSignedRuleSets);
            var host = Create(new Uri(cfg.Url), cfg.PinnedCallers(), deployment.Resolve(cfg.AuditDirectory),
                ct => DeploymentHealth.ProbeAllAsync(deployment, TimeSpan.FromSeconds(2), ct), logs, options, commands, certificate, ruleSets, orchestrator,
                new DeploymentReplicaProgress(deployment));
            host._commandKey = key;
            return host;
        }
        catch
        {
            key?.Dispose();
            throw;
        }
    }

    /// <summary>The archive, holding at least the deployment's initial rule set (the version running after `sieveq up`).</summary>
    private static RuleSetArchive InitialArchive(DeploymentConfig deployment, ControllerConfig cfg, ILoggerFactory logs)
    {
        var archive = new RuleSetArchive(deployment.Resolve(cfg.RuleSetArchiveDirectory));
        if (deployment.Rules is { } rules)
        {
            try
            {
                archive.Keep(Rules.RuleSetLoader.CompileUnsigned(File.ReadAllBytes(deployment.Resolve(rules.File))));
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException or Rules.RuleSetException)
            {
                // The replicas refuse to start with it too; the controller still serves everything else, without that diff.
                logs.CreateLogger<ControllerHost>().LogWarning("the initial rule set {File} is not kept for diffs: {Error}", rules.File, e.Message);
            }
        }
        return archive;
    }

    public async Task StartAsync(CancellationToken ct = default)
    {
        await _web.StartAsync(ct).ConfigureAwait(false);
        await Audit.AppendAsync("controller", "start", Url.ToString(), $"serving; audit log verified up to record {Audit.LastSequence}", ct).ConfigureAwait(false);
        _rounds?.Start();
    }

    /// <summary>The proactive recovery rounds, when controller.json asks for them.</summary>
    public ProactiveRecoveryRounds? ProactiveRounds => _rounds;

    public async Task StopAsync(CancellationToken ct = default)
    {
        await _web.StopAsync(ct).ConfigureAwait(false);
        await Audit.AppendAsync("controller", "stop", Url.ToString(), "stopped", ct).ConfigureAwait(false);
    }

    public async ValueTask DisposeAsync()
    {
        if (_rounds is not null)
        {
            // A round under way ends (each step bounded) and is recorded before the log closes.
            await _rounds.DisposeAsync().ConfigureAwait(false);
        }
        await _web.DisposeAsync().ConfigureAwait(false);
        // A replacement under way finishes (each step bounded) and is recorded before the log closes.
        await Replacement.DisposeAsync().ConfigureAwait(false);
        if (_orchestrator is IAsyncDisposable owned)
        {
            await owned.DisposeAsync().ConfigureAwait(false);
        }
        await Audit.DisposeAsync().ConfigureAwait(false);
        _authenticator.Dispose();
        _commandKey?.Dispose();
    }
}
