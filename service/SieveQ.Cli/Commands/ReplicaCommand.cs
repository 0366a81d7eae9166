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
        var telemetry = TelemetryArguments.AddTo(cmd);
        cmd.SetAction(async (parse, ct) =>
        {
            ClusterSupport.PreferInlineSocketCompletions();
            using var stop = new StopSignal(ct);
            var arguments = new ReplicaArguments(parse.GetValue(config)!.FullName, parse.GetValue(id), parse.GetValue(unreplicated), parse.GetValue(statusLines));
            return await ComponentHost.RunAsync($"replica {arguments.Id}", parse.GetValue(logLevel), arguments,
                telemetry.Read(parse, "replica", $"replica {arguments.Id}"), Validate, StartAsync, stop.Token).ConfigureAwait(false);
        });
        return cmd;
    }

    /// <summary>What `replica` parsed: validated when its host starts.</summary>
    private sealed record ReplicaArguments(string ConfigFile, int Id, bool Unreplicated, bool StatusLines);

    private static string? Validate(ReplicaArguments a) =>
        a.Id < 0 ? "--id must not be negative"
        : !File.Exists(a.ConfigFile) ? $"no cluster configuration file {a.ConfigFile}"
        : null;

    private static Task<RunningComponent> StartAsync(ReplicaArguments a, ILoggerFactory logs, CancellationToken ct)
    {
        var cluster = ClusterConfigFile.Load(a.ConfigFile);
        if (a.Id >= cluster.N)
        {
            throw new ComponentStartException($"replica {a.Id}: the cluster has replicas 0..{cluster.N - 1}");
        }
        var key = ClusterBootstrap.LoadKey(cluster, a.Id);
        var app = new BenchmarkApplication();
        if (a.Unreplicated)
        {
            var server = new UnreplicatedServer(cluster, a.Id, key, app, logs);
            server.Start();
            return Task.FromResult(new RunningComponent(null, $"unreplicated server {a.Id}", StatusJson: null, async () =>
            {
                await server.DisposeAsync().ConfigureAwait(false);
                key.Dispose();
            }));
        }
        var host = new ReplicaHost(cluster, a.Id, key, app, logs, appState: () => app.StateDescription);
        host.Start();
        return Task.FromResult(new RunningComponent(host.Completion, $"replica {a.Id} core loop", a.StatusLines ? () => host.Status.ToJson() : null, async () =>
        {
            await host.DisposeAsync().ConfigureAwait(false);
            key.Dispose();
        }));
    }
}
