using System.CommandLine;
using Microsoft.Extensions.Logging;
using SieveQ.Cli.Running;
using SieveQ.Controller;
using SieveQ.Controller.Audit;
using SieveQ.Deployment;

namespace SieveQ.Cli.Commands;

/// <summary>`sieveq controller --deployment DIR`: runs the controller (audit log, management API) until SIGTERM or Ctrl-C.</summary>
internal static class ControllerCommand
{
    public static Command Build()
    {
        var deployment = DeploymentOption.Required("Deployment directory (holding deployment.json and controller.json).");
        var create = new Option<bool>("--create-local")
        {
            Description = "When controller.json is missing, create it with a free loopback port and an administrator, operator and viewer key in the deployment's key folder (what `sieveq up` does).",
        };
        var logLevel = new Option<LogLevel>("--log-level") { Description = "Minimum log level (logs go to stderr).", DefaultValueFactory = _ => LogLevel.Information };
        var cmd = new Command("controller", "Run the controller: the audit log and the management API `sieveq admin` uses (SIGTERM or Ctrl-C stops it).") { deployment, create, logLevel };
        var telemetry = TelemetryArguments.AddTo(cmd);
        cmd.SetAction(async (parse, ct) =>
        {
            using var stop = new StopSignal(ct);
            var arguments = new ControllerArguments(parse.GetValue(deployment)!.FullName, parse.GetValue(create));
            return await ComponentHost.RunAsync("controller", parse.GetValue(logLevel), arguments,
                telemetry.Read(parse, "controller", "controller"), _ => null, StartAsync, stop.Token).ConfigureAwait(false);
        });
        return cmd;
    }

    /// <summary>What `controller` parsed.</summary>
    private sealed record ControllerArguments(string Directory, bool CreateLocal);

    private static async Task<RunningComponent> StartAsync(ControllerArguments a, ILoggerFactory logs, CancellationToken ct)
    {
        ControllerHost host;
        try
        {
            if (a.CreateLocal)
            {
                ControllerConfig.EnsureLocal(DeploymentFile.Load(a.Directory));
            }
            host = ControllerHost.ForDeployment(a.Directory, logs);
        }
        catch (AuditLogBrokenException e)
        {
            // Refusing to start is the point: a controller that appended to a broken chain would hide the break.
            throw new ComponentStartException($"controller: the audit log is broken, not starting: {e.Message}", e);
        }
        catch (Exception e) when (e is DeploymentException or ArgumentException or IOException or UnauthorizedAccessException or System.Security.Cryptography.CryptographicException)
        {
            throw new ComponentStartException($"controller: {e.Message}", e);
        }
        try
        {
            await host.StartAsync(ct).ConfigureAwait(false);
        }
        catch (IOException e)
        {
            await host.DisposeAsync().ConfigureAwait(false);
            throw new ComponentStartException($"controller: cannot listen on {host.Url}: {e.Message}", e);
        }
        catch
        {
            await host.DisposeAsync().ConfigureAwait(false);
            throw;
        }
        Console.WriteLine($"controller listening on {host.Url} (audit log {host.Audit.CurrentFile}, record {host.Audit.LastSequence})");
        return new RunningComponent(null, "controller", null, async () =>
        {
            await host.StopAsync(CancellationToken.None).ConfigureAwait(false);
            await host.DisposeAsync().ConfigureAwait(false);
        });
    }
}
