using System.CommandLine;
using Microsoft.Extensions.Logging;
using SieveQ.Cli.Running;
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
            using var stop = new StopSignal(ct);
            var host = ReplicaSqHost.Create(context, self, new ReplicaSqHostOptions(), logs);
            await using (host.ConfigureAwait(false))
            {
                await host.StartAsync(stop.Token).ConfigureAwait(false);
                return await RunUntilStopped.WaitAsync(stop.Token, host.Completion, $"replica-SQ {self} core loop",
                    parse.GetValue(statusLines) ? () => host.Ordering.Status.ToJson() : null).ConfigureAwait(false);
            }
        });
        return cmd;
    }
}
