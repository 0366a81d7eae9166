using System.Globalization;
using SieveQ.Deployment;

namespace SieveQ.Cli.Running;

/// <summary>
/// The loopback scrape ports `sieveq up` gives its component processes (one each, from one free block), and the
/// arguments that tell each its port and, when given, the OTLP collector.
/// </summary>
internal sealed class ScrapePorts
{
    public const string ControllerName = "controller";

    private readonly Dictionary<string, int> _ports;
    private readonly string? _otlpEndpoint;

    private ScrapePorts(Dictionary<string, int> ports, string? otlpEndpoint)
    {
        _ports = ports;
        _otlpEndpoint = otlpEndpoint;
    }

    /// <summary>Every process of the deployment (replica-SQs, pre-SQs, agents, the controller), in start order.</summary>
    public static ScrapePorts Plan(DeploymentConfig config, string? otlpEndpoint)
    {
        ArgumentNullException.ThrowIfNull(config);
        var names = config.Replicas.Select(r => LocalDeploymentLauncher.ReplicaName(r.Id))
            .Concat(config.PreSqs.Select(p => LocalDeploymentLauncher.PreSqName(p.Id)))
            .Concat(config.Agents.Select(a => LocalDeploymentLauncher.AgentName(a.Name)))
            .Append(ControllerName)
            .ToList();
        // The deployment's own ports are not bound yet, so a block found free could overlap them: the ordering ports
        // sit 100 below the replica APIs (DeploymentBootstrap), the pre-SQs above them.
        var own = config.Replicas.Select(r => new Uri(r.ApiUrl).Port).Concat(config.PreSqs.Select(p => new Uri(p.Url).Port)).ToList();
        var (low, high) = (own.Min() - 100, own.Max());
        var first = PortPlan.FindFreeBlock(names.Count);
        for (var attempt = 0; attempt < 20 && first + names.Count > low && first <= high; attempt++)
        {
            first = PortPlan.FindFreeBlock(names.Count);
        }
        return new ScrapePorts(names.Select((n, i) => (n, i)).ToDictionary(x => x.n, x => first + x.i, StringComparer.Ordinal), otlpEndpoint);
    }

    public IReadOnlyDictionary<string, int> Ports => _ports;

    public Uri Url(string process) => new($"http://127.0.0.1:{_ports[process].ToString(CultureInfo.InvariantCulture)}/metrics");

    /// <summary>The process's --metrics-listen (and --otlp-endpoint) arguments.</summary>
    public IReadOnlyList<string> ArgumentsFor(string process)
    {
        var args = new List<string>();
        if (_ports.TryGetValue(process, out var port))
        {
            args.AddRange(["--metrics-listen", "127.0.0.1:" + port.ToString(CultureInfo.InvariantCulture)]);
        }
        if (_otlpEndpoint is not null)
        {
            args.AddRange(["--otlp-endpoint", _otlpEndpoint]);
        }
        return args;
    }

    public void Print()
    {
        foreach (var (name, _) in _ports)
        {
            Console.WriteLine($"  metrics        {name,-14} {Url(name)}");
        }
    }
}
