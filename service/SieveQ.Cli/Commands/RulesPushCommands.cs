using System.CommandLine;
using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;
using SieveQ.Deployment;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq rules push FILE` and `sieveq rules rollback`: an ordered switch of the replicas' rule set.
/// The command is built against the version f+1 replicas report running, signed with the
/// administrator key, carried by a pre-SQ (the next one if a pre-SQ cannot be reached), and the
/// outcome printed is the one f+1 replicas agreed on. Exit 0 only when it was applied.
/// </summary>
internal static class RulesPushCommands
{
    private static readonly TimeSpan SubmitTimeout = TimeSpan.FromSeconds(30);

    private static Option<DirectoryInfo> DeploymentDirectory() => DeploymentOption.Required("Deployment directory (deployment.json).");

    private static Option<FileInfo> KeyOption() => new("--key")
    {
        Description = "Administrator private key (PEM, ECDSA P-256); the deployment's pinned administrator key (keys/administrator.pem in a local deployment).",
        Required = true,
    };

    public static Command BuildPush()
    {
        var file = new Argument<FileInfo>("file") { Description = "Rule set (JSON) with its signature in FILE.sig; its version must be above the running one." };
        var deployment = DeploymentDirectory();
        var key = KeyOption();
        var cmd = new Command("push", "Activate a signed rule set on every replica-SQ at one point of the agreed order; the running version is kept for rollback.")
        {
            file, deployment, key,
        };
        cmd.SetAction(async (parse, ct) => await RunAsync(parse.GetValue(deployment)!, parse.GetValue(key)!, (cfg, admin, state) =>
        {
            var (command, compiled) = RuleSetPublisher.BuildPush(parse.GetValue(file)!.FullName, admin, cfg, state);
            Console.WriteLine($"pushing {compiled.Document.Name ?? "(unnamed)"} version {compiled.Version} (sha256 {compiled.DigestHex}) in place of version {state.ActiveVersion}");
            return command;
        }, ct).ConfigureAwait(false));
        return cmd;
    }

    public static Command BuildRollback()
    {
        var deployment = DeploymentDirectory();
        var key = KeyOption();
        var cmd = new Command("rollback", "Switch every replica-SQ back to the rule-set version kept before the running one, at one point of the agreed order.")
        {
            deployment, key,
        };
        cmd.SetAction(async (parse, ct) => await RunAsync(parse.GetValue(deployment)!, parse.GetValue(key)!, (cfg, admin, state) =>
        {
            var command = RuleSetPublisher.BuildRollback(admin, cfg, state);
            Console.WriteLine($"rolling back from version {state.ActiveVersion} to version {state.PreviousVersion}");
            return command;
        }, ct).ConfigureAwait(false));
        return cmd;
    }

    private static async Task<int> RunAsync(DirectoryInfo dir, FileInfo keyFile, Func<DeploymentConfig, ECDsa, RulesState, byte[]> build, CancellationToken ct)
    {
        try
        {
            var cfg = DeploymentFile.Load(dir.FullName);
            using var admin = LoadKey(keyFile);
            var state = await RuleSetPublisher.ReadStateAsync(cfg, ct).ConfigureAwait(false);
            var command = build(cfg, admin, state);
            var (result, preSq) = await RuleSetPublisher.SubmitAsync(cfg, command, SubmitTimeout, ct).ConfigureAwait(false);
            return Report(result, preSq);
        }
        catch (Exception e) when (e is DeploymentException or RuleSetPublishException)
        {
            Console.Error.WriteLine($"error: {e.Message}");
            return 1;
        }
    }

    internal static int Report(RuleSetResult result, string preSq)
    {
        if (result.Applied)
        {
            Console.WriteLine($"APPLIED (agreed by f+1 replica-SQs, via {preSq}): {result.Reason}");
            return 0;
        }
        Console.Error.WriteLine($"REFUSED by the replica-SQs (via {preSq}): {result.Reason}; version {result.ActiveVersion} keeps running");
        return 1;
    }

    private static ECDsa LoadKey(FileInfo file)
    {
        var key = ECDsa.Create();
        try
        {
            key.ImportFromPem(File.ReadAllText(file.FullName));
            return key;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException or CryptographicException)
        {
            key.Dispose();
            throw new RuleSetPublishException($"cannot use {file.FullName} as the administrator key: {e.Message}", e);
        }
    }
}
