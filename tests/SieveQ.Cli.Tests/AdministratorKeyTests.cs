using System.Security.Cryptography;
using SieveQ.Deployment;
using SieveQ.Rules.Signing;

namespace SieveQ.Cli.Tests;

/// <summary>
/// Every new deployment pins an administrator key, so senders can be enrolled and routes changed through the ordering
/// without a rule set; one deployment pins one key; `sieveq route` refuses bad arguments and keys before it orders
/// anything.
/// </summary>
public sealed class AdministratorKeyTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-admin-key-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public void A_deployment_of_fixed_routes_pins_the_key_it_keeps_in_its_key_folder()
    {
        var cfg = DeploymentBootstrap.Create(Path.Combine(_dir, "d"), new LocalDeploymentSpec { BasePort = 0 });
        Assert.Null(cfg.Rules);
        using var admin = ECDsa.Create();
        admin.ImportFromPem(File.ReadAllText(Path.Combine(_dir, "d", "keys", DeploymentRules.AdministratorKeyName + ".pem")));
        Assert.True(SignerKey.Of(admin).Matches(cfg.AdministratorKey!));
        Assert.Equal(cfg.AdministratorKey, DeploymentFile.Load(Path.Combine(_dir, "d")).PinnedAdministratorKey);
        // The controller of a local deployment signs its commands with it.
        Assert.NotNull(new AdminCommandSubmitter(cfg, admin));
    }

    [Fact]
    public void A_given_key_is_pinned_without_a_rule_set_too()
    {
        using var own = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var cfg = DeploymentBootstrap.Create(Path.Combine(_dir, "d"), new LocalDeploymentSpec { BasePort = 0, AdministratorKeyPem = own.ExportPkcs8PrivateKeyPem() });
        Assert.True(SignerKey.Of(own).Matches(cfg.AdministratorKey!));
        Assert.False(File.Exists(Path.Combine(_dir, "d", "keys", DeploymentRules.AdministratorKeyName + ".pem")));
        using var other = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var e = Assert.Throws<DeploymentException>(() => new AdminCommandSubmitter(cfg, other));
        Assert.Contains("is not the deployment's administrator key", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void One_deployment_pins_one_key_and_a_malformed_one_is_refused()
    {
        var cfg = DeploymentBootstrap.Create(Path.Combine(_dir, "d"), new LocalDeploymentSpec { BasePort = 0 });
        using var other = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var two = cfg with { Rules = new RulesEntry { File = "rules/initial.json", AdministratorKey = SignerKey.Of(other).SpkiBase64 } };
        Assert.Contains("a deployment pins one administrator key", Assert.Throws<DeploymentException>(two.Validate).Message, StringComparison.Ordinal);
        var garbled = cfg with { AdministratorKey = "not base64!" };
        Assert.Contains("\"administratorKey\" must be the base64", Assert.Throws<DeploymentException>(garbled.Validate).Message, StringComparison.Ordinal);
        // A file from before the key existed pins none: administrator commands are refused at the submitter, saying why.
        var none = cfg with { AdministratorKey = null };
        none.Validate();
        using var admin = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        Assert.Contains("pins no administrator key", Assert.Throws<DeploymentException>(() => new AdminCommandSubmitter(none, admin)).Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("allow --sender -1 --receiver 100", "--sender must not be negative", 2)]
    [InlineData("allow --sender 1 --receiver -5", "--receiver must not be negative", 2)]
    [InlineData("allow --sender 1 --receiver 100 --max-bytes 2000000", "--max-bytes must be 0 to 1048576", 2)]
    [InlineData("remove --sender 1 --receiver 100 --key WRONG", "is not the deployment's administrator key", 1)]
    [InlineData("remove --sender 1 --receiver 100 --key MISSING", "cannot use", 1)]
    public async Task Route_commands_refuse_bad_arguments_and_keys_before_ordering_anything(string args, string expected, int code)
    {
        DeploymentBootstrap.Create(Path.Combine(_dir, "d"), new LocalDeploymentSpec { BasePort = 0 });
        using var wrong = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var wrongFile = Path.Combine(_dir, "wrong.pem");
        await File.WriteAllTextAsync(wrongFile, wrong.ExportPkcs8PrivateKeyPem());
        var key = Path.Combine(_dir, "d", "keys", DeploymentRules.AdministratorKeyName + ".pem");
        List<string> argv = ["route", .. args.Replace("WRONG", wrongFile, StringComparison.Ordinal).Replace("MISSING", Path.Combine(_dir, "none.pem"), StringComparison.Ordinal).Split(' ')];
        if (!argv.Contains("--key"))
        {
            argv.AddRange(["--key", key]);
        }
        argv.AddRange(["--deployment", Path.Combine(_dir, "d")]);
        var (exit, stdout, stderr) = await SieveqProcess.RunAsync(argv);
        Assert.True(exit == code, stdout + stderr);
        Assert.Contains(expected, stderr, StringComparison.Ordinal);
        Assert.DoesNotContain("APPLIED", stdout, StringComparison.Ordinal);
    }
}
