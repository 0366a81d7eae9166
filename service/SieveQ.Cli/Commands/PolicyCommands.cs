using SieveQ.Policy.Hosting;
using System.CommandLine;
using SieveQ.Policy;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq policy`: the Group Policy settings the agent runs with. `show` reads them the way the agent does
/// (registry on Windows, the JSON mirror elsewhere); `check` judges a mirror file before it is deployed.
/// </summary>
internal static class PolicyCommands
{
    public static Command Build()
    {
        var policy = new Command("policy", "The agent's Group Policy settings: show the effective policy, check a JSON policy file.");
        policy.Subcommands.Add(BuildShow());
        policy.Subcommands.Add(BuildCheck());
        return policy;
    }

    private static Command BuildShow()
    {
        var file = new Option<string?>("--file")
        {
            Description = $"JSON policy file (default: ${JsonFilePolicySource.PathVariable}, else {JsonFilePolicySource.DefaultPath}; on Windows without --file, the registry).",
        };
        var json = new Option<bool>("--json") { Description = "Print the policy as a JSON mirror of the registry key instead of text." };
        var cmd = new Command("show", "Print the effective policy, as the agent would apply it.") { file, json };
        cmd.SetAction(parse =>
        {
            using var source = OpenSource(parse.GetValue(file));
            var evaluation = PolicyLoader.Evaluate(source.Read());
            Console.WriteLine(evaluation.Fingerprint == PolicySnapshot.NotConfiguredFingerprint
                ? $"source: {evaluation.Source} (absent: nothing configured, defaults apply)"
                : $"source: {evaluation.Source}");
            PrintWarnings(evaluation);
            if (!evaluation.IsValid)
            {
                PrintErrors(evaluation);
                Console.Error.WriteLine("this policy would be refused; the agent keeps the last good policy it applied");
                return 1;
            }
            Console.Write(parse.GetValue(json)
                ? JsonPolicyMirror.Write(PolicyLayout.ToKey(evaluation.Policy!)) + "\n"
                : PolicyText.Describe(evaluation.Policy!));
            return 0;
        });
        return cmd;
    }

    private static Command BuildCheck()
    {
        var file = new Argument<string>("file") { Description = "JSON policy file (a mirror of HKLM\\SOFTWARE\\Policies\\SieveQ)." };
        var cmd = new Command("check", "Validate a JSON policy file as the agent would, all errors at once.") { file };
        cmd.SetAction(parse =>
        {
            var evaluation = PolicyFiles.EvaluateFile(parse.GetValue(file)!);
            PrintWarnings(evaluation);
            if (!evaluation.IsValid)
            {
                PrintErrors(evaluation);
                return 1;
            }
            var p = evaluation.Policy!;
            Console.WriteLine($"ok: {evaluation.Source}: driver mode {PolicyLayout.Name(p.DriverMode)}, {p.PreSqEndpoints.Length} pre-SQ endpoints, " +
                $"{p.ApplicationWhitelist.Length} whitelisted applications, rule set {(p.RuleSet is null ? "not configured" : "pinned")}, " +
                $"enrolment {(p.Enrolment is null ? "not configured" : "configured")} ({evaluation.Fingerprint})");
            return 0;
        });
        return cmd;
    }

    /// <summary>The registry on Windows without a file, else the JSON mirror (also used by `sieveq agent --firewall`).</summary>
    internal static IPolicySource OpenSource(string? file)
    {
        if (file is null && OperatingSystem.IsWindows())
        {
            return new RegistryPolicySource();
        }
        return new JsonFilePolicySource(JsonFilePolicySource.ResolvePath(file));
    }

    private static void PrintErrors(PolicyEvaluation evaluation)
    {
        Console.Error.WriteLine($"invalid: {evaluation.Source}: {evaluation.Errors.Length} error(s)");
        foreach (string error in evaluation.Errors)
        {
            Console.Error.WriteLine($"  error: {error}");
        }
    }

    private static void PrintWarnings(PolicyEvaluation evaluation)
    {
        foreach (string warning in evaluation.Warnings)
        {
            Console.Error.WriteLine($"  warning: {warning}");
        }
    }
}
