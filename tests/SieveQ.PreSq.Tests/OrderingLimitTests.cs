using System.Text.Json.Nodes;
using SieveQ.Sieve.Envelope;
using SieveQ.Deployment;

namespace SieveQ.PreSq.Tests;

/// <summary>
/// Whatever the edge accepts, the ordering layer must order: a pre-SQ refuses to start in front of a cluster whose
/// requests cannot carry the largest message it accepts, saying which setting to raise (issue 16, item 3).
/// </summary>
[Collection(PreSqCollection.Name)]
public sealed class OrderingLimitTests(PreSqTestBed bed)
{
    [Fact]
    public void A_pre_sq_refuses_a_cluster_whose_requests_are_smaller_than_its_largest_message()
    {
        var copy = Directory.CreateTempSubdirectory("sieveq-presq-limits-").FullName;
        try
        {
            CopyDirectory(bed.Deployment.Directory, copy);
            var ctx = DeploymentContext.Load(copy);
            var clusterFile = ctx.Config.Resolve(ctx.Config.ClusterFile);
            var cluster = JsonNode.Parse(File.ReadAllText(clusterFile))!;
            cluster["protocol"]!["maxBatchBytes"] = 4 * 1024 * 1024;
            File.WriteAllText(clusterFile, cluster.ToJsonString());
            var small = DeploymentContext.Load(copy);
            Assert.True(small.Cluster.Protocol.MaxRequestPayloadBytes < EnvelopeLimits.MinOrderingPayloadBytes);

            var e = Assert.Throws<DeploymentException>(() => PreSqHost.Create(small, small.Config.PreSqs[0].Id));
            Assert.Contains($"a pre-SQ needs {EnvelopeLimits.MinOrderingPayloadBytes}", e.Message, StringComparison.Ordinal);
            Assert.Contains("raise maxBatchBytes", e.Message, StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(copy, recursive: true);
        }
    }

    private static void CopyDirectory(string from, string to)
    {
        foreach (var dir in Directory.GetDirectories(from, "*", SearchOption.AllDirectories))
        {
            Directory.CreateDirectory(dir.Replace(from, to, StringComparison.Ordinal));
        }
        // Keys, enrolment and configuration only: the running test bed's data files are locked and not needed.
        var data = Path.Combine(from, "data") + Path.DirectorySeparatorChar;
        foreach (var file in Directory.GetFiles(from, "*", SearchOption.AllDirectories).Where(f => !f.StartsWith(data, StringComparison.Ordinal)))
        {
            File.Copy(file, file.Replace(from, to, StringComparison.Ordinal));
        }
    }
}
