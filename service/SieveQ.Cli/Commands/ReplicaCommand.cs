using System.CommandLine;
using Microsoft.Extensions.Logging;
using SieveQ.Bft.Hosting.Bench;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Replica;
using SieveQ.Cli.Running;

namespace SieveQ.Cli.Commands;

/// <summary>`sieveq replica --config FILE --id N`: runs one replica process until SIGTERM or Ctrl-C.</summary>
internal static class ReplicaCommand
{
    public static Command Build()
    {
        var config = new Option<FileInfo>("--config") { Description = "Cluster configuration file (see `sieveq bft init-cluster`).", Required = true };
        var id = new Option<int>("--id") { Description = "This replica's id (0..n-1).", Required = true };
        var unreplicated = new Option<bool>("--unreplicated") { Description = "Run the unreplicated baseline server (benchmarks only) on this replica's endpoint." };
        var statusLines = new Option<bool>("--status-stdout") { Description = "Also print a `status {json}` line every second on stdout." };
        var logLevel = new Option<LogLevel>("--log-level") { Description = "Minimum log level (logs go to stderr).", DefaultValueFactory = _ => LogLevel.Information };
        var cmd = new Command("replica", "Run one BFT replica (SIGTERM or Ctrl-C stops it cleanly).") { config, id, unreplicated, statusLines, logLevel };
        cmd.SetAction(async (parse, ct) =>
        {
            ClusterSupport.PreferInlineSocketCompletions();
            var cluster = ClusterConfigFile.Load(parse.GetValue(config)!.FullName);
            var self = parse.GetValue(id);
            using var logs = ClusterSupport.CreateLogging(parse.GetValue(logLevel));
            using var key = ClusterBootstrap.LoadKey(cluster, self);
            using var stop = new StopSignal(ct);
            var app = new BenchmarkApplication();
            if (parse.GetValue(unreplicated))
            {
                await using var server = new UnreplicatedServer(cluster, self, key, app, logs);
                server.Start();
                return await RunUntilStopped.WaitAsync(stop.Token, completion: null, $"unreplicated server {self}").ConfigureAwait(false);
            }
            var host = new ReplicaHost(cluster, self, key, app, logs, appState: () => app.StateDescription);
            await using (host.ConfigureAwait(false))
            {
                host.Start();
                return await RunUntilStopped.WaitAsync(stop.Token, host.Completion, $"replica {self} core loop",
                    parse.GetValue(statusLines) ? () => host.Status.ToJson() : null).ConfigureAwait(false);
            }
        });
        return cmd;
    }
}
