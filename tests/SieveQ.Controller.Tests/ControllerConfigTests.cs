using SieveQ.Controller.Access;
using SieveQ.Deployment;

namespace SieveQ.Controller.Tests;

public sealed class ControllerConfigTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-controller-config-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public void A_local_deployment_gets_one_key_per_role_private_to_its_owner_and_pinned_by_public_key()
    {
        var deployment = DeploymentBootstrap.Create(_dir, new LocalDeploymentSpec { BasePort = PortPlan.FindFreeBase(4, 2), Durability = false });
        var cfg = ControllerConfig.EnsureLocal(deployment);
        Assert.Equal([ManagementRole.Administrator, ManagementRole.Operator, ManagementRole.Viewer, .. Enumerable.Repeat(ManagementRole.Replica, 4)],
            cfg.Callers.Select(c => c.Role));
        // Each replica-SQ is pinned by the identity key cluster.json pins for it, under its id, to report its notices.
        var cluster = SieveQ.Bft.Hosting.Config.ClusterConfigFile.Load(deployment.Resolve(deployment.ClusterFile));
        Assert.Equal(cluster.Replicas.Select(r => (r.Id, r.PublicKey)), cfg.Callers.Where(c => c.Role == ManagementRole.Replica).Select(c => (c.ReplicaId!.Value, c.PublicKey)));
        foreach (var caller in cfg.PinnedCallers().Where(c => c.Role != ManagementRole.Replica))
        {
            var file = ControllerConfig.LocalKeyFile(deployment, caller.Role);
            using var key = ManagementKeyFile.Read(file);
            Assert.Equal(caller.KeyId, ManagementSignature.KeyIdOf(key.ExportSubjectPublicKeyInfo()));
            if (!OperatingSystem.IsWindows())
            {
                Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(file));
            }
        }
        // controller.json holds public keys only.
        Assert.DoesNotContain("PRIVATE", File.ReadAllText(ControllerConfig.PathIn(_dir)), StringComparison.Ordinal);
        // A second call keeps what is there.
        Assert.Equal(cfg.Url, ControllerConfig.EnsureLocal(deployment).Url);
    }

    [Fact]
    public void A_replica_caller_needs_its_replica_id_and_nothing_else_may_have_one()
    {
        File.WriteAllText(ControllerConfig.PathIn(_dir), """{ "url": "http://127.0.0.1:1", "callers": [{ "name": "r", "role": "replica", "replicaId": 2, "publicKey": "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEZUJpffqxPHjQyifCD0PHeG0KyK8V/+cvCEsoCjP3pGBcn7a+j6qxSY74WLEbO4A15Mz63neteGtbm6IxWWxG9w==" }] }""");
        var caller = Assert.Single(ControllerConfig.Load(_dir).PinnedCallers());
        Assert.Equal((ManagementRole.Replica, 2), (caller.Role, caller.ReplicaId));
    }

    [Theory]
    [InlineData("""{ "url": "http://127.0.0.1:1", "callers": [{ "name": "x", "role": "root", "publicKey": "AAAA" }] }""")]
    [InlineData("""{ "url": "http://127.0.0.1:1", "callers": [{ "name": "x", "role": "viewer", "publicKey": "AAAA" }] }""")]
    [InlineData("""{ "url": "https://127.0.0.1:1", "callers": [] }""")]
    [InlineData("""{ "url": "http://127.0.0.1:1", "callers": [{ "name": "r", "role": "replica", "publicKey": "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEZUJpffqxPHjQyifCD0PHeG0KyK8V/+cvCEsoCjP3pGBcn7a+j6qxSY74WLEbO4A15Mz63neteGtbm6IxWWxG9w==" }] }""")]
    [InlineData("""{ "url": "http://127.0.0.1:1", "callers": [{ "name": "v", "role": "viewer", "replicaId": 0, "publicKey": "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEZUJpffqxPHjQyifCD0PHeG0KyK8V/+cvCEsoCjP3pGBcn7a+j6qxSY74WLEbO4A15Mz63neteGtbm6IxWWxG9w==" }] }""")]
    [InlineData("""{ "url": "http://127.0.0.1:1", "callers": [], "selfAssertedRoles": true }""")]
    [InlineData("""{ "url": "http://127.0.0.1:1", "callers": [{ "name": "", "role": "viewer", "publicKey": "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEZUJpffqxPHjQyifCD0PHeG0KyK8V/+cvCEsoCjP3pGBcn7a+j6qxSY74WLEbO4A15Mz63neteGtbm6IxWWxG9w==" }] }""")]
    [InlineData("""{ "url": "http://127.0.0.1:1", "callers": [{ "name": "tab\there", "role": "viewer", "publicKey": "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEZUJpffqxPHjQyifCD0PHeG0KyK8V/+cvCEsoCjP3pGBcn7a+j6qxSY74WLEbO4A15Mz63neteGtbm6IxWWxG9w==" }] }""")]
    [InlineData("""{ "url": "http://127.0.0.1:1", "callers": [{ "name": "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn", "role": "viewer", "publicKey": "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEZUJpffqxPHjQyifCD0PHeG0KyK8V/+cvCEsoCjP3pGBcn7a+j6qxSY74WLEbO4A15Mz63neteGtbm6IxWWxG9w==" }] }""")]
    public void A_controller_json_that_does_not_pin_keys_properly_is_refused(string json)
    {
        File.WriteAllText(ControllerConfig.PathIn(_dir), json);
        Assert.Throws<DeploymentException>(() => ControllerConfig.Load(_dir));
    }

    [Theory]
    [InlineData(9, false)]
    [InlineData(10, true)]
    [InlineData(1440, true)]
    [InlineData(43_200, true)]
    [InlineData(43_201, false)]
    [InlineData(-5, false)]
    public void A_proactive_recovery_round_interval_is_taken_only_within_its_bounds(int minutes, bool taken)
    {
        File.WriteAllText(ControllerConfig.PathIn(_dir), $$"""{ "url": "http://127.0.0.1:1", "callers": [], "recoveryRoundEveryMinutes": {{minutes}} }""");
        if (taken)
        {
            Assert.Equal(minutes, ControllerConfig.Load(_dir).RecoveryRoundEveryMinutes);
        }
        else
        {
            var e = Assert.Throws<DeploymentException>(() => ControllerConfig.Load(_dir));
            Assert.EndsWith("recoveryRoundEveryMinutes must be 10 to 43200", e.Message, StringComparison.Ordinal);
        }
    }
}
