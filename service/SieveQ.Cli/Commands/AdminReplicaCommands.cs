using System.CommandLine;
using SieveQ.Controller;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq admin replica start|recover --id N` and `sieveq admin replica round`: the controller starts a replica-SQ, or
/// recovers one (a fresh process on its kept state, refused unless 2f+1 others are healthy, done once it has caught up),
/// or recovers every replica in turn, each time the current leader first (administrator). Exit codes as every admin command: 0 done,
/// 1 refused or unreachable, 2 usage, 3 recorded but not carried out (the status says why).
/// </summary>
internal static class AdminReplicaCommands
{
    public static Command Build(WithManagementClient withClient)
    {
        var replica = new Command("replica", "Start or recover replica-SQ processes through the controller's orchestrator (administrator).");
        replica.Subcommands.Add(Action(withClient, "start", ControllerNames.StartReplica, "Start the replica-SQ's process; returns once it is healthy."));
        replica.Subcommands.Add(Action(withClient, "recover", ControllerNames.RecoverReplica,
            "Restart the replica-SQ as a fresh process on its kept state; returns once it has decided as far as the others had. Refused unless 2f+1 other replicas are healthy."));
        var reason = AdminCommands.ReasonOption();
        var round = new Command("round", "Recover every replica-SQ in turn, each time the current leader first (it hands the regency over as it stops), each once the previous one has caught up; stops at the first that fails.") { reason };
        replica.Subcommands.Add(withClient(round, (parse, ct) => async client =>
            AdminCommands.Report(await client.RecoverReplicasAsync(parse.GetValue(reason) ?? "", ct).ConfigureAwait(false), "done")));
        return replica;
    }

    private static Command Action(WithManagementClient withClient, string name, string method, string description) =>
        AdminCommands.IdAction(withClient, name, description, "The replica-SQ's id (0 to 3f, as in deployment.json).",
            (client, id, reason, ct) => client.ReplicaLifecycleAsync(method, id, reason, ct));
}
