using System.CommandLine;
using System.Runtime.InteropServices;
using Microsoft.Extensions.Logging;
using SieveQ.Bft.Hosting.Bench;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Replica;

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
            using var stop = CancellationTokenSource.CreateLinkedTokenSource(ct);
            using var term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, ctx =>
            {
                ctx.Cancel = true;  // we stop ourselves, cleanly
                stop.Cancel();
            });
            var app = new BenchmarkApplication();
            if (parse.GetValue(unreplicated))
            {
                await using var server = new UnreplicatedServer(cluster, self, key, app, logs);
                server.Start();
                await WaitAsync(stop.Token).ConfigureAwait(false);
                return 0;
            }
            var host = new ReplicaHost(cluster, self, key, app, logs, appState: () => app.StateDescription);
            await using (host.ConfigureAwait(false))
            {
                host.Start();
                var printer = parse.GetValue(statusLines) ? PrintStatusAsync(host, stop.Token) : Task.CompletedTask;
                var finished = await Task.WhenAny(WaitAsync(stop.Token), host.Completion).ConfigureAwait(false);
                await printer.ConfigureAwait(false);
                if (finished == host.Completion && host.Completion.IsFaulted)
                {
                    await Console.Error.WriteLineAsync($"replica {self} core loop failed: {host.Completion.Exception?.GetBaseException()}").ConfigureAwait(false);
                    return 2;
                }
            }
            return 0;
        });
        return cmd;
    }

    private static async Task WaitAsync(CancellationToken ct)
    {
        try
        {
            await Task.Delay(Timeout.Infinite, ct).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // asked to stop
        }
    }

    private static async Task PrintStatusAsync(ReplicaHost host, CancellationToken ct)
    {
        using var timer = new PeriodicTimer(TimeSpan.FromSeconds(1));
        try
        {
            while (await timer.WaitForNextTickAsync(ct).ConfigureAwait(false))
            {
                await Console.Out.WriteLineAsync("status " + host.Status.ToJson()).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException)
        {
            // asked to stop
        }
    }
}
