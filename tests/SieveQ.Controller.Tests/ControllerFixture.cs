using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Controller.Access;
using SieveQ.Deployment;

namespace SieveQ.Controller.Tests;

/// <summary>A controller on a real Kestrel HTTP/2 listener on loopback, with one pinned key per role and one key that is not pinned.</summary>
internal sealed class ControllerFixture : IAsyncDisposable
{
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "sieveq-controller-" + Guid.NewGuid().ToString("N"));

    private ControllerFixture(ControllerHost host)
    {
        Host = host;
    }

    public ControllerHost Host { get; private set; } = null!;
    public ECDsa Administrator { get; } = ECDsa.Create(ECCurve.NamedCurves.nistP256);
    public ECDsa Operator { get; } = ECDsa.Create(ECCurve.NamedCurves.nistP256);
    public ECDsa Viewer { get; } = ECDsa.Create(ECCurve.NamedCurves.nistP256);
    public ECDsa Unpinned { get; } = ECDsa.Create(ECCurve.NamedCurves.nistP256);

    public static IReadOnlyList<ComponentHealth> FakeComponents { get; } =
    [
        new("replica-sq", "replica-sq-0", "http://127.0.0.1:1", true, true, "ok", new Dictionary<string, long> { ["ordered"] = 7 }),
        new("pre-sq", "pre-sq-4", "http://127.0.0.1:2", false, false, "connection refused", new Dictionary<string, long>()),
    ];

    public static async Task<ControllerFixture> StartAsync(Func<string, RuleSetDesk>? ruleSets = null, Controller.Orchestration.IComponentOrchestrator? orchestrator = null,
        Controller.Orchestration.IReplicaProgressSource? replicas = null, ControllerHostOptions? options = null)
    {
        var f = new ControllerFixture(null!);
        var callers = new List<PinnedCaller>
        {
            new("alice", ManagementRole.Administrator, f.Administrator.ExportSubjectPublicKeyInfo()),
            new("olga", ManagementRole.Operator, f.Operator.ExportSubjectPublicKeyInfo()),
            new("victor", ManagementRole.Viewer, f.Viewer.ExportSubjectPublicKeyInfo()),
        };
        f.Host = ControllerHost.Create(new Uri($"http://127.0.0.1:{FreePort()}"), callers, Path.Combine(f._dir, "audit"),
            _ => Task.FromResult(FakeComponents), NullLoggerFactory.Instance, ruleSets: ruleSets?.Invoke(Path.Combine(f._dir, "rule-sets")),
            options: options, orchestrator: orchestrator, replicaProgress: replicas);
        await f.Host.StartAsync();
        return f;
    }

    public ManagementClient Client(ECDsa key, TimeProvider? time = null) => new(Host.Url, key, time);

    public static int FreePort()
    {
        using var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        return ((IPEndPoint)probe.LocalEndpoint).Port;
    }

    public async ValueTask DisposeAsync()
    {
        await Host.StopAsync();
        await Host.DisposeAsync();
        foreach (var k in (ECDsa[])[Administrator, Operator, Viewer, Unpinned])
        {
            k.Dispose();
        }
        if (Directory.Exists(_dir))
        {
            Directory.Delete(_dir, recursive: true);
        }
    }
}

/// <summary>A clock that stays where a test puts it.</summary>
internal sealed class ShiftedTime(TimeSpan shift) : TimeProvider
{
    public TimeSpan Shift { get; set; } = shift;

    public override DateTimeOffset GetUtcNow() => System.GetUtcNow() + Shift;
}
