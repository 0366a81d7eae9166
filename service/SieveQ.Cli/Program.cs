using System.CommandLine;
using SieveQ.Cli.Commands;

// `sieveq`: the one entry point for operators. Each command group lives in its own file under Commands/.
var root = new RootCommand("SieveQ: an intrusion-tolerant application firewall (message-queue sieve with BFT replicas).");

// command groups
root.Subcommands.Add(VersionCommand.Build());

return await root.Parse(args).InvokeAsync().ConfigureAwait(false);
