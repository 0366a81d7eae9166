using System.CommandLine;
using System.Runtime.InteropServices;
using Microsoft.Extensions.Logging;
using SieveQ.Deployment;
using SieveQ.ReplicaSq;

namespace SieveQ.Cli.Commands;

/// <summary>`sieveq replica-sq --deployment DIR --id N`: one replica-SQ (ordering replica + sieve + its gRPC API) until SIGTERM or Ctrl-C.</summary>
internal static class ReplicaSqCommand
{
    public static Command Build()
    {
        var deployment = new Option<DirectoryInfo>("--deployment") { Description = "Deployment directory (or its deployment.json).", Required = true };
        var id = new Option<int>("--id") { Description = "This replica's id (0..n-1).", Required = true };
        var statusLines = new Option<bool>("--status-stdout") { Description = "Also print a `status {json}` line every second on stdout." };
        var logLevel = new Option<LogLevel>("--log-level") { Description = "Minimum log level (logs go to stderr).", DefaultValueFactory = _ => LogLevel.Information };
        var cmd = new Command("replica-sq", "Run one replica-SQ of a deployment (SIGTERM or Ctrl-C stops it cleanly).") { deployment, id, statusLines, logLevel };
        cmd.SetAction(async (parse, ct) =>
        {
            ClusterSupport.PreferInlineSocketCompletions();
            var self = parse.GetValue(id);
            DeploymentContext context;
            try
            {
                context = DeploymentContext.Load(parse.GetValue(deployment)!.FullName);
            }
            catch (DeploymentException e)
            {
                await Console.Error.WriteLineAsync(e.Message).ConfigureAwait(false);
                return 1;
            }
            using var logs = ClusterSupport.CreateLogging(parse.GetValue(logLevel));
            using var stop = CancellationTokenSource.CreateLinkedTokenSource(ct);
            using var term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, ctx =>
            {
                ctx.Cancel = true;  // we stop ourselves, cleanly
                stop.Cancel();
            });
            var host = ReplicaSqHost.Create(context, self, new ReplicaSqHostOptions(), logs);
            await using (host.ConfigureAwait(false))
            {
                await host.StartAsync(stop.Token).ConfigureAwait(false);
                var printer = parse.GetValue(statusLines) ? PrintStatusAsync(host, stop.Token) : Task.CompletedTask;
                var finished = await Task.WhenAny(WaitAsync(stop.Token), host.Completion).ConfigureAwait(false);
                await printer.ConfigureAwait(false);
                if (finished == host.Completion && host.Completion.IsFaulted)
                {
                    await Console.Error.WriteLineAsync($"replica-SQ {self} core loop failed: {host.Completion.Exception?.GetBaseException()}").ConfigureAwait(false);
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

    private static async Task PrintStatusAsync(ReplicaSqHost host, CancellationToken ct)
    {
        using var timer = new PeriodicTimer(TimeSpan.FromSeconds(1));
        try
        {
            while (await timer.WaitForNextTickAsync(ct).ConfigureAwait(false))
            {
                await Console.Out.WriteLineAsync("status " + host.Ordering.Status.ToJson()).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException)
        {
            // asked to stop
        }
    }
}
