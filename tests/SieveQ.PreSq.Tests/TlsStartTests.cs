using SieveQ.Deployment;

namespace SieveQ.PreSq.Tests;

/// <summary>A pre-SQ whose TLS certificate files cannot be served refuses to start, naming the file and the reason.</summary>
public sealed class TlsStartTests : IDisposable
{
    private readonly TestDeployment _deployment = new();

    private string KeyFile(int id, string extension) =>
        Path.Combine(_deployment.Directory, "keys", DeploymentTls.FileStem(PartyRole.PreSq, id) + extension);

    [Fact]
    public void A_garbled_missing_or_replaced_certificate_stops_the_start_with_its_file_and_reason()
    {
        var ids = _deployment.Context.Config.PreSqs.Select(p => p.Id).ToArray();
        Assert.StartsWith("https://", _deployment.Context.Config.PreSq(ids[0]).Url, StringComparison.Ordinal);

        File.WriteAllText(KeyFile(ids[0], ".crt"), "-----BEGIN CERTIFICATE-----\nZ2FyYmxlZA==\n-----END CERTIFICATE-----\n");
        var garbled = Assert.Throws<DeploymentException>(() => PreSqHost.Create(_deployment.Context, ids[0]));
        Assert.Contains(KeyFile(ids[0], ".crt"), garbled.Message, StringComparison.Ordinal);
        Assert.Contains("cannot be loaded", garbled.Message, StringComparison.Ordinal);

        File.Delete(KeyFile(ids[0], ".key"));
        var missing = Assert.Throws<DeploymentException>(() => PreSqHost.Create(_deployment.Context, ids[0]));
        Assert.Contains("does not exist", missing.Message, StringComparison.Ordinal);

        // The other pre-SQ's certificate and key: a valid pair, but not the key the deployment pins for this one.
        File.Copy(KeyFile(ids[1], ".crt"), KeyFile(ids[0], ".crt"), overwrite: true);
        File.Copy(KeyFile(ids[1], ".key"), KeyFile(ids[0], ".key"), overwrite: true);
        var replaced = Assert.Throws<DeploymentException>(() => PreSqHost.Create(_deployment.Context, ids[0]));
        Assert.Contains("but the deployment pins", replaced.Message, StringComparison.Ordinal);
    }

    public void Dispose()
    {
        _deployment.Dispose();
    }
}
