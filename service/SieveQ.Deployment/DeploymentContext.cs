using SieveQ.Bft.Hosting.Config;
using SieveQ.Sieve.Keys;

namespace SieveQ.Deployment;

/// <summary>A loaded deployment: the deployment file, the enrolment and the ordering cluster it names.</summary>
public sealed class DeploymentContext
{
    private DeploymentContext(DeploymentConfig config, Enrolment enrolment, ClusterConfig cluster)
    {
        Config = config;
        Enrolment = enrolment;
        Cluster = cluster;
    }

    public DeploymentConfig Config { get; }
    public Enrolment Enrolment { get; }
    public ClusterConfig Cluster { get; }

    public static DeploymentContext Load(string path)
    {
        var config = DeploymentFile.Load(path);
        Enrolment enrolment;
        ClusterConfig cluster;
        try
        {
            enrolment = Enrolment.FromJson(File.ReadAllText(config.Resolve(config.EnrolmentFile)));
            cluster = ClusterConfigFile.Load(config.Resolve(config.ClusterFile));
        }
        catch (Exception e) when (e is IOException or FormatException or InvalidDataException or System.Text.Json.JsonException or ArgumentException)
        {
            throw new DeploymentException($"deployment {config.BaseDirectory}: {e.Message}", e);
        }
        if (enrolment.F != config.F || cluster.N != config.N)
        {
            throw new DeploymentException("deployment, enrolment and cluster disagree on f / the number of replicas");
        }
        var clientIds = cluster.Clients.Select(c => c.Id).ToHashSet();
        if (config.PreSqs.Any(p => !clientIds.Contains(p.Id) || enrolment.PreSqs.All(e => e.Id != p.Id)))
        {
            throw new DeploymentException("every pre-SQ must be an ordering client in the cluster file and enrolled");
        }
        return new DeploymentContext(config, enrolment, cluster);
    }

    public PartyKeys Keys(PartyRole role, int id) => PartyKeys.Open(Config, Enrolment, role, id);
}
