using System.CommandLine;
using SieveQ.Controller;

namespace SieveQ.Cli.Commands;

/// <summary>Adds the options every `sieveq admin` command has to <paramref name="cmd"/> and runs <paramref name="action"/> with a signed client.</summary>
internal delegate Command WithManagementClient(Command cmd, Func<ParseResult, CancellationToken, Func<ManagementClient, Task<int>>> action);

/// <summary>
/// `sieveq admin rules push FILE` and `sieveq admin rules rollback`: rule-set changes through the controller's
/// management API (operator), which checks the rule set, signs the activation with the administrator key it holds
/// (or passes on FILE.sig), orders it and audits every step; unlike `sieveq rules push`, the caller needs no
/// administrator key, only a pinned management key.
/// </summary>
internal static class AdminRuleSetCommands
{
    /// <summary>The rule set's upload is refused by the controller above this; read no more than that.</summary>
    private const long MaxFileBytes = 256 * 1024;

    public static Command Build(WithManagementClient withClient)
    {
        var rules = new Command("rules", "Push or roll back the replicas' rule set through the controller (operator; checked, ordered and audited there).");
        rules.Subcommands.Add(Push(withClient));
        rules.Subcommands.Add(Rollback(withClient));
        return rules;
    }

    private static Command Push(WithManagementClient withClient)
    {
        var file = new Argument<FileInfo>("file") { Description = "The rule set (JSON); FILE.sig beside it is sent too when it exists, otherwise the controller signs." };
        var reason = AdminCommands.ReasonOption();
        var cmd = new Command("push", "Activate a rule set on every replica-SQ at one point of the agreed order; its version must be above the running one.") { file, reason };
        return withClient(cmd, (parse, ct) => async client =>
        {
            var f = parse.GetValue(file)!;
            if (!f.Exists || f.Length > MaxFileBytes)
            {
                await Console.Error.WriteLineAsync($"error: {f.FullName}: {(f.Exists ? $"larger than {MaxFileBytes / 1024} KiB" : "no such file")}").ConfigureAwait(false);
                return 2;
            }
            var document = await File.ReadAllBytesAsync(f.FullName, ct).ConfigureAwait(false);
            var sigFile = f.FullName + ".sig";
            var signature = File.Exists(sigFile) && new FileInfo(sigFile).Length <= 4096 ? await File.ReadAllBytesAsync(sigFile, ct).ConfigureAwait(false) : [];
            return AdminCommands.Report(await client.PushRuleSetAsync(document, signature, parse.GetValue(reason) ?? "", ct).ConfigureAwait(false));
        });
    }

    private static Command Rollback(WithManagementClient withClient)
    {
        var reason = AdminCommands.ReasonOption();
        var cmd = new Command("rollback", "Switch every replica-SQ back to the version kept before the running one.") { reason };
        return withClient(cmd, (parse, ct) => async client => AdminCommands.Report(await client.RollbackRuleSetAsync(parse.GetValue(reason) ?? "", ct).ConfigureAwait(false)));
    }
}
