using System.CommandLine;
using Microsoft.Extensions.Logging;
using SieveQ.Cli.Running;
using SieveQ.Controller;
using SieveQ.Controller.Audit;
using SieveQ.Controller.Orchestration;
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
        var launchPlan = new Option<FileInfo?>("--launch-plan")
        {
            Description = $"Own the pre-SQ and replica-SQ processes: start, stop, replace and recover them as child processes with the command lines of this file ({LocalLaunchPlan.FileName}, which `sieveq up` writes).",
        };
        var windowsPreSq = new Option<int?>("--windows-pre-sq-service")
        {
            Description = $"Windows: act on the pre-SQ with this id through the SieveQPreSq service the MSI installed.",
        };
        var cmd = new Command("controller", "Run the controller: the audit log and the management API `sieveq admin` uses (SIGTERM or Ctrl-C stops it).")
        {
            deployment, create, logLevel, launchPlan, windowsPreSq,
        };
        var telemetry = TelemetryArguments.AddTo(cmd);
        cmd.SetAction(async (parse, ct) =>
        {
            using var stop = new StopSignal(ct);
            var arguments = new ControllerArguments(parse.GetValue(deployment)!.FullName, parse.GetValue(create), parse.GetValue(launchPlan)?.FullName,
                parse.GetValue(windowsPreSq));
            return await ComponentHost.RunAsync("controller", parse.GetValue(logLevel), arguments,
                telemetry.Read(parse, "controller", "controller"), Validate, StartAsync, stop.Token).ConfigureAwait(false);
        });
        return cmd;
    }

    /// <summary>What `controller` parsed.</summary>
    private sealed record ControllerArguments(string Directory, bool CreateLocal, string? LaunchPlan, int? WindowsPreSq);

    private static string? Validate(ControllerArguments a) =>
        a.LaunchPlan is not null && a.WindowsPreSq is not null ? "give one orchestrator: --launch-plan or --windows-pre-sq-service"
        : a.WindowsPreSq is not null && !OperatingSystem.IsWindows() ? "--windows-pre-sq-service needs Windows"
        : a.WindowsPreSq < 0 ? "--windows-pre-sq-service must not be negative"
        : null;

    /// <summary>The orchestrator the arguments name; none: the controller records what it would have done.</summary>
    private static IComponentOrchestrator? Orchestrator(ControllerArguments a, ILoggerFactory logs)
    {
        if (a.WindowsPreSq is { } id && OperatingSystem.IsWindows())
        {
            return WindowsServiceOrchestrator.ForInstalledPreSq(id);
        }
        if (a.LaunchPlan is not { } file)
        {
            return null;
        }
        var deployment = DeploymentFile.Load(a.Directory);
        var plan = LocalLaunchPlan.Load(file);
        var processes = new ComponentProcesses(args => ClusterProcesses.SelfCommand(args), Path.Combine(deployment.BaseDirectory, "logs"));
        var orchestrator = new LocalProcessOrchestrator(processes, plan.CommandLines(), (c, ct) => DeploymentComponentHealth.HealthyAsync(deployment, c, ct));
        var log = logs.CreateLogger("SieveQ.Controller.Orchestration");
        // A component that ended without being stopped is reported, not restarted: that is the replicas' or an administrator's call.
        processes.Exited += (name, code) => log.LogWarning("{Component} exited by itself with code {Code} (see {Log})", name, code, processes.LogPath(name));
        return orchestrator;
    }

    private static async Task<RunningComponent> StartAsync(ControllerArguments a, ILoggerFactory logs, CancellationToken ct)
    {
        ControllerHost host;
        try
        {
            if (a.CreateLocal)
            {
                ControllerConfig.EnsureLocal(DeploymentFile.Load(a.Directory));
            }
            host = ControllerHost.ForDeployment(a.Directory, logs, orchestrator: Orchestrator(a, logs));
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
