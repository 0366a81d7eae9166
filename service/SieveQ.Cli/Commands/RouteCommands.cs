using System.CommandLine;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq route allow|remove`: the fixed routes of a deployment without signed rule sets, changed through the
/// ordering with no restart. The administrator signs the change, a pre-SQ carries it, and what f+1 replicas agreed on
/// is printed. deployment.json keeps the initial routes; it is not rewritten. Exit codes as `sieveq enrol`: 0 applied,
/// 1 error, 2 bad arguments, 3 refused by the replicas.
/// </summary>
internal static class RouteCommands
{
    private const string Unchanged = "deployment.json is not changed: its routes are the initial set the replicas started from";

    public static Command Build()
    {
        var route = new Command("route", "Allow or remove fixed routes through the ordering, without restart (deployments without signed rule sets).");
        route.Subcommands.Add(Allow());
        route.Subcommands.Add(Remove());
        return route;
    }

    private static Command Allow()
    {
        var (sender, receiver) = Ends();
        var maxBytes = new Option<int>("--max-bytes")
        {
            Description = $"The largest DATA the route admits, in bytes (at most {EnvelopeLimits.MaxDataBytes}); an existing route gets the new limit.",
            DefaultValueFactory = _ => 64 * 1024,
        };
        var (deployment, key) = EnrolCommands.Common();
        var cmd = new Command("allow", "Let a sender send to a receiver, up to a size; every replica applies it at one point of the agreed order.")
        {
            sender, receiver, maxBytes, deployment, key,
        };
        cmd.SetAction(async (parse, ct) =>
        {
            var (s, r, max) = (parse.GetValue(sender), parse.GetValue(receiver), parse.GetValue(maxBytes));
            var problem = Problem(s, r) ?? (max is < 0 or > EnvelopeLimits.MaxDataBytes ? $"--max-bytes must be 0 to {EnvelopeLimits.MaxDataBytes}" : null);
            if (problem is not null)
            {
                await Console.Error.WriteLineAsync($"error: {problem}").ConfigureAwait(false);
                return 2;
            }
            return await SubmitAsync(parse.GetValue(deployment)!, parse.GetValue(key)!, (sub, c) => sub.AllowRouteAsync(s, r, max, c), ct).ConfigureAwait(false);
        });
        return cmd;
    }

    private static Command Remove()
    {
        var (sender, receiver) = Ends();
        var (deployment, key) = EnrolCommands.Common();
        var cmd = new Command("remove", "Take a route away: messages on it are rejected from that point of the agreed order on.") { sender, receiver, deployment, key };
        cmd.SetAction(async (parse, ct) =>
        {
            var (s, r) = (parse.GetValue(sender), parse.GetValue(receiver));
            if (Problem(s, r) is { } problem)
            {
                await Console.Error.WriteLineAsync($"error: {problem}").ConfigureAwait(false);
                return 2;
            }
            return await SubmitAsync(parse.GetValue(deployment)!, parse.GetValue(key)!, (sub, c) => sub.RemoveRouteAsync(s, r, c), ct).ConfigureAwait(false);
        });
        return cmd;
    }

    private static async Task<int> SubmitAsync(DirectoryInfo deployment, FileInfo key,
        Func<SieveQ.Deployment.AdminCommandSubmitter, CancellationToken, Task<SieveQ.Deployment.AdminCommandReport>> submit, CancellationToken ct)
    {
        var code = await EnrolCommands.SubmitAsync(deployment, key, submit, ct).ConfigureAwait(false);
        if (code == 0)
        {
            Console.WriteLine(Unchanged);
        }
        return code;
    }

    private static (Option<int> Sender, Option<int> Receiver) Ends() =>
        (new Option<int>("--sender") { Description = "The sender's id.", Required = true },
         new Option<int>("--receiver") { Description = "The receiver's id.", Required = true });

    private static string? Problem(int sender, int receiver) =>
        sender < 0 ? "--sender must not be negative" : receiver < 0 ? "--receiver must not be negative" : null;
}
