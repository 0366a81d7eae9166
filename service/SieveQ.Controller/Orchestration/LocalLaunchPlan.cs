using System.Globalization;
using System.Text.Json;
using SieveQ.Deployment;

namespace SieveQ.Controller.Orchestration;

/// <summary>
/// The command lines the controller starts local components with: what `sieveq up` would run for each pre-SQ and
/// replica-SQ (its log level, its metrics port), written by `up` beside deployment.json for the controller it starts. It holds only
/// arguments of this same program, never a program to run, and it sits where deployment.json does: whoever can write
/// it can already rewrite the deployment.
/// </summary>
public sealed record LocalLaunchPlan
{
    public const string FileName = "controller-launch.json";

    private static readonly JsonSerializerOptions Json = new() { WriteIndented = true, PropertyNamingPolicy = JsonNamingPolicy.CamelCase };

    /// <summary>Pre-SQ id (as text, JSON keys being strings) to its `sieveq pre-sq ...` arguments.</summary>
    public Dictionary<string, List<string>> PreSqs { get; init; } = [];

    /// <summary>Replica-SQ id to its `sieveq replica-sq ...` arguments; empty in a plan that leaves the replicas to whoever launched them.</summary>
    public Dictionary<string, List<string>> Replicas { get; init; } = [];

    /// <summary>The plan of a deployment launched with <paramref name="options"/>, the same arguments as <see cref="LocalDeploymentLauncher"/> uses.</summary>
    public static LocalLaunchPlan For(DeploymentConfig config, LaunchOptions options)
    {
        ArgumentNullException.ThrowIfNull(config);
        return new LocalLaunchPlan
        {
            PreSqs = config.PreSqs.ToDictionary(p => p.Id.ToString(CultureInfo.InvariantCulture), p => LocalDeploymentLauncher.PreSqArgs(config, p.Id, options).ToList()),
            Replicas = config.Replicas.ToDictionary(r => r.Id.ToString(CultureInfo.InvariantCulture), r => LocalDeploymentLauncher.ReplicaArgs(config, r.Id, options).ToList()),
        };
    }

    public IReadOnlyDictionary<ComponentRef, IReadOnlyList<string>> CommandLines() =>
        PreSqs.Select(kv => (Ref: ComponentRef.PreSq(Id(kv.Key)), Args: kv.Value))
            .Concat(Replicas.Select(kv => (Ref: ComponentRef.Replica(Id(kv.Key)), Args: kv.Value)))
            .ToDictionary(e => e.Ref, e => (IReadOnlyList<string>)e.Args);

    private static int Id(string key) => int.Parse(key, NumberStyles.None, CultureInfo.InvariantCulture);

    public void Save(string path) => File.WriteAllText(path, JsonSerializer.Serialize(this, Json));

    /// <summary>Reads a plan; a malformed one is refused whole (<see cref="DeploymentException"/>).</summary>
    public static LocalLaunchPlan Load(string path)
    {
        try
        {
            var plan = JsonSerializer.Deserialize<LocalLaunchPlan>(File.ReadAllText(path), Json) ?? throw new DeploymentException($"{path} is empty");
            Check(path, plan.PreSqs ?? throw new DeploymentException($"{path}: preSqs must be an object"), "pre-SQ", "pre-sq");
            Check(path, plan.Replicas ?? throw new DeploymentException($"{path}: replicas must be an object"), "replica-SQ", "replica-sq");
            return plan;
        }
        catch (JsonException e)
        {
            throw new DeploymentException($"{path} is not a launch plan: {e.Message}", e);
        }
    }

    private static void Check(string path, Dictionary<string, List<string>> entries, string what, string command)
    {
        foreach (var (id, args) in entries)
        {
            if (!int.TryParse(id, NumberStyles.None, CultureInfo.InvariantCulture, out _) || args is null || args.Count == 0 || args[0] != command)
            {
                throw new DeploymentException($"{path}: {what} '{id}' needs a numeric id and `{command} ...` arguments");
            }
        }
    }
}
