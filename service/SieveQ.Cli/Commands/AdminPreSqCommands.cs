using System.CommandLine;
using SieveQ.Controller;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq admin pre-sq start|stop|replace --id N [--reason TEXT]`: the controller starts, stops or replaces (stop, then
/// a fresh process) a pre-SQ through its orchestrator (administrator). Exit codes as every admin command: 0 done,
/// 1 refused or unreachable, 2 usage, 3 recorded but not carried out (no orchestrator, or it failed; the status says).
/// </summary>
internal static class AdminPreSqCommands
{
    public static Command Build(WithManagementClient withClient)
    {
        var preSq = new Command("pre-sq", "Start, stop or replace a pre-SQ's process through the controller's orchestrator (administrator).");
        preSq.Subcommands.Add(Action(withClient, "start", ControllerNames.StartPreSq, "Start the pre-SQ's process; returns once it is healthy."));
        preSq.Subcommands.Add(Action(withClient, "stop", ControllerNames.StopPreSq, "Stop the pre-SQ's process (its senders move to other pre-SQs at their next ACKREQ)."));
        preSq.Subcommands.Add(Action(withClient, "replace", ControllerNames.ReplacePreSq, "Stop the pre-SQ's process and start a fresh one with the same id."));
        return preSq;
    }

    private static Command Action(WithManagementClient withClient, string name, string method, string description) =>
        AdminCommands.IdAction(withClient, name, description, "The pre-SQ's id (as in deployment.json).",
            (client, id, reason, ct) => client.PreSqLifecycleAsync(method, id, reason, ct));
}
