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
        var deployment = DeploymentOption.Required("Deployment directory (or its deployment.json).");
        var id = new Option<int>("--id") { Description = "This replica's id (0..n-1).", Required = true };
        var statusLines = new Option<bool>("--status-stdout") { Description = "Also print a `status {json}` line every second on stdout." };
        var logLevel = new Option<LogLevel>("--log-level") { Description = "Minimum log level (logs go to stderr).", DefaultValueFactory = _ => LogLevel.Information };
        var cmd = new Command("replica-sq", "Run one replica-SQ of a deployment (SIGTERM or Ctrl-C stops it cleanly).") { deployment, id, statusLines, logLevel };
        var telemetry = TelemetryArguments.AddTo(cmd);
        cmd.SetAction(async (parse, ct) =>
        {
            ClusterSupport.PreferInlineSocketCompletions();
            using var stop = new StopSignal(ct);
            var arguments = new ReplicaSqArguments(parse.GetValue(deployment)!.FullName, parse.GetValue(id), parse.GetValue(statusLines), new ReplicaSqHostOptions());
            return await ComponentHost.RunAsync($"replica-SQ {arguments.Id}", parse.GetValue(logLevel), arguments,
                telemetry.Read(parse, "replica-sq", $"replica-sq {arguments.Id}"), Validate, StartAsync, stop.Token).ConfigureAwait(false);
        });
        return cmd;
    }

    /// <summary>What `replica-sq` parsed: validated when its host starts.</summary>
    private sealed record ReplicaSqArguments(string Directory, int Id, bool StatusLines, ReplicaSqHostOptions Options);

    /// <summary>The replica-SQ's own option checks (<see cref="ReplicaSqHostOptions.Validate"/>), as the host's start-time validation.</summary>
    private static string? Validate(ReplicaSqArguments a) => ComponentArguments.Problem(a.Id, a.Options.Validate);

    private static async Task<RunningComponent> StartAsync(ReplicaSqArguments a, ILoggerFactory logs, CancellationToken ct)
    {
        DeploymentContext context;
        try
        {
            context = DeploymentContext.Load(a.Directory);
        }
        catch (DeploymentException e)
        {
            throw new ComponentStartException(e.Message, e);
        }
        var host = ReplicaSqHost.Create(context, a.Id, a.Options, logs);
        try
        {
            await host.StartAsync(ct).ConfigureAwait(false);
        }
        catch
        {
            await host.DisposeAsync().ConfigureAwait(false);
            throw;
        }
        return new RunningComponent(host.Completion, $"replica-SQ {a.Id} core loop", a.StatusLines ? () => host.Ordering.Status.ToJson() : null, host.DisposeAsync);
    }
}
