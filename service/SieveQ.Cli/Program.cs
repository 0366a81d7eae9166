using System.CommandLine;
using System.CommandLine.Parsing;
using SieveQ.Cli.Commands;
using SieveQ.Cli.Running;

// `sieveq`: the one entry point for operators. Each command group lives in its own file under Commands/.
var root = new RootCommand("SieveQ: an intrusion-tolerant application firewall (message-queue sieve with BFT replicas).");

// command groups
root.Subcommands.Add(RulesCommands.Build());
root.Subcommands.Add(PolicyCommands.Build());
root.Subcommands.Add(ReplicaSqCommand.Build());
root.Subcommands.Add(AgentCommands.Build());
root.Subcommands.Add(AgentCommands.BuildDemo());
root.Subcommands.Add(PreSqCommand.Build());
root.Subcommands.Add(ControllerCommand.Build());
root.Subcommands.Add(AdminCommands.Build());
foreach (var c in DeployCommands.Build())
{
    root.Subcommands.Add(c);
}
root.Subcommands.Add(UpCommand.Build());
root.Subcommands.Add(RouteCommands.Build());
root.Subcommands.Add(StatusCommand.Build());
root.Subcommands.Add(SendCommand.Build());
root.Subcommands.Add(SimCommand.Build());
root.Subcommands.Add(ReplicaCommand.Build());
root.Subcommands.Add(ClusterCommand.Build());
root.Subcommands.Add(KeysCommand.Build());
root.Subcommands.Add(FuzzCommand.Build());
root.Subcommands.Add(FirewallCommands.Build());
var bench = new Command("bench", "Benchmarks.");
bench.Subcommands.Add(BenchBftCommand.Build());
bench.Subcommands.Add(BenchRulesCommand.Build());
bench.Subcommands.Add(BenchE2eCommand.Build());
bench.Subcommands.Add(BenchFwCommand.Build());
bench.Subcommands.Add(BenchRestartCommand.Build());
bench.Subcommands.Add(BenchRecoveryCommand.Build());
bench.Subcommands.Add(BenchAttackCommand.Build());
root.Subcommands.Add(bench);
root.Subcommands.Add(VersionCommand.Build());

// System.CommandLine ends the process 2 s after Ctrl-C or SIGTERM by default, with exit code 130 or 143. `up` needs
// longer to stop its components. A component command gets none of it: its own StopSignal and host lifetime stop it
// within ComponentHost.StopGrace and it exits with its own code (with the command line's wait, a replica slowed down
// in its stop exited 143 after STOPPING=1). Every other command keeps the default, so one that does not watch its
// token still ends promptly on Ctrl-C.
var parsed = root.Parse(args);
var invocation = new InvocationConfiguration();
var invoked = parsed.CommandResult.Command;
if (invoked.Name == UpCommand.Name)
{
    invocation.ProcessTerminationTimeout = UpCommand.StopBound;
}
else if (parsed.CommandResult.Parent is CommandResult { Command: RootCommand } && ComponentHost.CommandNames.Contains(invoked.Name))
{
    invocation.ProcessTerminationTimeout = null;
}
return await parsed.InvokeAsync(invocation).ConfigureAwait(false);
