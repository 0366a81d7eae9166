using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.AdminUi.Hosting;
using SieveQ.Controller;
using SieveQ.Controller.Access;
using SieveQ.Controller.Orchestration;
using SieveQ.Controller.RuleSets;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Tests;

/// <summary>
/// A real controller on loopback with the console's key pinned as an operator (as `init` pins it) or the role a test
/// names, optionally with an orchestrator, and the console's gateway to it.
/// </summary>
internal sealed class RealController : IAsyncDisposable
{
    private readonly string _dir = System.IO.Directory.CreateTempSubdirectory("sieveq-console-ctl-").FullName;
    private readonly ECDsa _key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
    private readonly ECDsa _administrator = ECDsa.Create(ECCurve.NamedCurves.nistP256);

    public static IReadOnlyList<ComponentHealth> Components { get; } =
    [
        new("replica-sq", "replica-sq-0", "http://127.0.0.1:1", true, true, "ok", new Dictionary<string, long> { ["regency"] = 5, ["last_decided"] = 42, ["dropped"] = 3, ["drop.Rules.RuleDenied"] = 3,
            ["queue.100"] = 3, ["queue_bytes.100"] = 2048, ["quarantined.pre_sq.4"] = 1, ["suspicion.pre_sq.4"] = 9, ["quarantined.pre_sq.5"] = 0, ["suspicion.pre_sq.5"] = 0,
            ["rules.active_version"] = 3, ["rules.previous_version"] = 2, ["rules.commands_applied"] = 2 }),
        new("replica-sq", "replica-sq-1", "http://127.0.0.1:2", true, true, "ok", new Dictionary<string, long> { ["regency"] = 5, ["last_decided"] = 41, ["dropped"] = 3, ["drop.Rules.RuleDenied"] = 3,
            ["queue.100"] = 5, ["queue_bytes.100"] = 4096, ["quarantined.pre_sq.4"] = 1, ["suspicion.pre_sq.4"] = 7, ["quarantined.pre_sq.5"] = 1, ["suspicion.pre_sq.5"] = 1,
            ["rules.active_version"] = 3, ["rules.previous_version"] = 2, ["rules.commands_applied"] = 2 }),
        new("pre-sq", "pre-sq-4", "http://127.0.0.1:3", false, false, "connection refused", new Dictionary<string, long> { ["drop.Mac.BadMac"] = 2, ["passed"] = 500 }),
        new("agent", "agent", "unix:/x", true, true, "ok", new Dictionary<string, long> { ["receiver.100.delivered"] = 1000, ["receiver.100.committed"] = 990, ["sender.1.accepted"] = 77,
            ["sender.1.verdict_latency_samples"] = 120, ["sender.1.verdict_latency_p50_us"] = 2500, ["sender.1.verdict_latency_p99_us"] = 9000,
            ["sender.2.verdict_latency_samples"] = 80, ["sender.2.verdict_latency_p50_us"] = 3100, ["sender.2.verdict_latency_p99_us"] = 14_200,
            ["sender.3.verdict_latency_samples"] = 0, ["sender.3.verdict_latency_p50_us"] = 0, ["sender.3.verdict_latency_p99_us"] = 99_000 }),
    ];

    /// <summary>What the controller's probe answers; a test may set another deployment's health before polling.</summary>
    public IReadOnlyList<ComponentHealth> Health { get; set; } = Components;

    /// <summary>A scratch directory, removed at the end: the test deployment's base directory.</summary>
    public string Directory => _dir;

    public ControllerHost Host { get; private set; } = null!;

    /// <summary>The deployment's side of rule-set switches, in memory: version 3 runs, 2 is kept (as <see cref="Components"/> say).</summary>
    public FakeRuleSetOrdering Ordering { get; private set; } = null!;
    public ControllerGateway Gateway { get; private set; } = null!;

    public static async Task<RealController> StartAsync(ManagementRole consoleRole = ManagementRole.Operator, IComponentOrchestrator? orchestrator = null,
        IReplicaProgressSource? replicas = null)
    {
        var c = new RealController();
        using var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        var port = ((IPEndPoint)probe.LocalEndpoint).Port;
        probe.Stop();
        c.Host = ControllerHost.Create(new Uri($"http://127.0.0.1:{port}"), [new PinnedCaller("console", consoleRole, c._key.ExportSubjectPublicKeyInfo())],
            Path.Combine(c._dir, "audit"), _ => Task.FromResult(c.Health), NullLoggerFactory.Instance, ruleSets: c.RuleSetDesk(), orchestrator: orchestrator,
            replicaProgress: replicas);
        await c.Host.StartAsync();
        c.Gateway = new ControllerGateway(new ManagementClient(c.Host.Url, c._key));
        return c;
    }

    private RuleSetDesk RuleSetDesk()
    {
        Ordering = new FakeRuleSetOrdering(_administrator) { State = new RulesState(3, 2, 0) };
        var archive = new RuleSetArchive(Path.Combine(_dir, "rule-sets"));
        archive.Keep(Rules.RuleSetLoader.CompileUnsigned(System.Text.Encoding.UTF8.GetBytes(TestRuleSets.Json(3))));
        return new RuleSetDesk(Ordering, archive);
    }

    public async ValueTask DisposeAsync()
    {
        _administrator.Dispose();
        Gateway.Dispose();
        await Host.StopAsync();
        await Host.DisposeAsync();
        _key.Dispose();
        System.IO.Directory.Delete(_dir, recursive: true);
    }
}
