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
        var deployment = new Option<DirectoryInfo>("--deployment") { Description = "Deployment directory (holding deployment.json and controller.json).", Required = true };
        var create = new Option<bool>("--create-local")
        {
            Description = "When controller.json is missing, create it with a free loopback port and an administrator, operator and viewer key in the deployment's key folder (what `sieveq up` does).",
        };
        var logLevel = new Option<LogLevel>("--log-level") { Description = "Minimum log level (logs go to stderr).", DefaultValueFactory = _ => LogLevel.Information };
        var cmd = new Command("controller", "Run the controller: the audit log and the management API `sieveq admin` uses (SIGTERM or Ctrl-C stops it).") { deployment, create, logLevel };
        cmd.SetAction(async (parse, ct) =>
        {
            var dir = parse.GetValue(deployment)!.FullName;
            using var logs = ClusterSupport.CreateLogging(parse.GetValue(logLevel));
            using var stop = new StopSignal(ct);
            ControllerHost host;
            try
            {
                if (parse.GetValue(create))
                {
                    ControllerConfig.EnsureLocal(DeploymentFile.Load(dir));
                }
                host = ControllerHost.ForDeployment(dir, logs);
            }
            catch (AuditLogBrokenException e)
            {
                // Refusing to start is the point: a controller that appended to a broken chain would hide the break.
                await Console.Error.WriteLineAsync($"controller: the audit log is broken, not starting: {e.Message}").ConfigureAwait(false);
                return 3;
            }
            catch (Exception e) when (e is DeploymentException or ArgumentException or IOException or UnauthorizedAccessException or System.Security.Cryptography.CryptographicException)
            {
                await Console.Error.WriteLineAsync($"controller: {e.Message}").ConfigureAwait(false);
                return 1;
            }
            await using (host.ConfigureAwait(false))
            {
                try
                {
                    await host.StartAsync(stop.Token).ConfigureAwait(false);
                }
                catch (IOException e)
                {
                    await Console.Error.WriteLineAsync($"controller: cannot listen on {host.Url}: {e.Message}").ConfigureAwait(false);
                    return 1;
                }
                Console.WriteLine($"controller listening on {host.Url} (audit log {host.Audit.CurrentFile}, record {host.Audit.LastSequence})");
                var code = await RunUntilStopped.WaitAsync(stop.Token, null, "controller").ConfigureAwait(false);
                await host.StopAsync(CancellationToken.None).ConfigureAwait(false);
                return code;
            }
        });
        return cmd;
    }
}
