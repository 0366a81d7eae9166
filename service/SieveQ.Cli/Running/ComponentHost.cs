using System.Collections.Frozen;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Hosting.Systemd;
using Microsoft.Extensions.Hosting.WindowsServices;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using SieveQ.Bft.Hosting.Logging;
using SieveQ.Telemetry;

namespace SieveQ.Cli.Running;

/// <summary>
/// A component started by <see cref="ComponentHost"/>: what the run waits on and what stops it.
/// </summary>
/// <param name="Completion">Ends when the component's own loop ends (null: it has none); a fault is reported as <paramref name="What"/> failing.</param>
/// <param name="What">Names the loop in the failure message, e.g. "replica 2 core loop".</param>
/// <param name="StatusJson">When the command was given --status-stdout: the `status {json}` line printed every second.</param>
/// <param name="Stop">Stops the component and releases what it holds.</param>
internal sealed record RunningComponent(Task? Completion, string What, Func<string>? StatusJson, Func<ValueTask> Stop);

/// <summary>Why a component could not start (an unreadable deployment, a port in use): printed as is, exit code 1.</summary>
internal sealed class ComponentStartException(string message, Exception? inner = null) : Exception(message, inner);

/// <summary>
/// What a component command parsed from its arguments, as the host's options: validated when the host starts
/// (ValidateOnStart), before the component is created.
/// </summary>
internal sealed class ComponentOptions<T>
    where T : class
{
    public T? Value { get; set; }
}

/// <summary>
/// Runs one long-running component (pre-sq, replica-sq, replica, agent) inside the generic host, so that the
/// same executable is a console program, a systemd unit of Type=notify (UseSystemd: READY=1 once the component
/// is ready, STOPPING=1, the watchdog) and a Windows service (UseWindowsService: the service control manager
/// starts and stops it), and logs through the host's ILogger (stderr; the event log on Windows).
/// </summary>
internal static class ComponentHost
{
    /// <summary>How long the component is given to stop after SIGTERM, Ctrl-C or a service stop (systemd's TimeoutStopSec is 30 s).</summary>
    public static readonly TimeSpan StopGrace = TimeSpan.FromSeconds(20);

    /// <summary>The top-level commands that run a component in the host: they handle SIGTERM and Ctrl-C themselves (<see cref="StopSignal"/>).</summary>
    public static readonly FrozenSet<string> CommandNames = FrozenSet.ToFrozenSet(["replica", "replica-sq", "pre-sq", "controller", "agent"], StringComparer.Ordinal);

    /// <summary>The exit code of a component refused at start (invalid options, unreadable deployment, port in use).</summary>
    public const int RefusedAtStart = 1;

    /// <param name="name">The component as its messages name it, e.g. "pre-sq 2".</param>
    /// <param name="options">The parsed arguments, validated at start by <paramref name="validate"/>.</param>
    /// <param name="telemetry">Metrics and traces (<see cref="TelemetryArguments"/>): a problem refuses the start like invalid options.</param>
    /// <param name="validate">Null when valid, else why not (reuse the component's own validation).</param>
    /// <param name="start">Creates and starts the component; returns once it is ready (listening), which is when systemd is told READY=1.</param>
    /// <param name="stop">Ctrl-C and SIGTERM (<see cref="StopSignal"/>); the host's lifetime handles SIGTERM and the service control manager too.</param>
    /// <returns>0 when stopped or ended cleanly, 1 when refused at start, 2 when the component failed while running.</returns>
    public static async Task<int> RunAsync<T>(string name, LogLevel level, T options, TelemetrySettings telemetry, Func<T, string?> validate,
        Func<T, ILoggerFactory, CancellationToken, Task<RunningComponent>> start, CancellationToken stop)
        where T : class
    {
        var builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings { ApplicationName = "SieveQ" });
        ConfigureLogging(builder.Logging, level);
        builder.Services.Configure<HostOptions>(o => o.ShutdownTimeout = StopGrace);
        builder.Services.Configure<ConsoleLifetimeOptions>(o => o.SuppressStatusMessages = true);
        // UseSystemd and UseWindowsService in HostApplicationBuilder form; each does nothing unless started by its manager.
        builder.Services.AddSystemd();
        UseSystemdWhenAskedToNotify(builder.Services);
        builder.Services.AddWindowsService(o => o.ServiceName = "SieveQ " + name);
        builder.Services.AddOptions<ComponentOptions<T>>()
            .Configure(o => o.Value = options)
            .Validate(o => o.Value is not null, "no options")
            .ValidateOnStart();
        builder.Services.AddSingleton<IValidateOptions<ComponentOptions<T>>>(new ComponentOptionsValidator<T>(name, o => telemetry.Problem ?? validate(o)));
        if (telemetry.Options is { } telemetryOptions)
        {
            // Before the component's hosted service: the scrape listener is up before the component says it is ready.
            builder.Services.AddSieveQTelemetry(telemetryOptions);
        }
        builder.Services.AddSingleton(new ComponentRun<T>(name, start));
        builder.Services.AddHostedService<ComponentService<T>>();

        using var host = builder.Build();
        var log = host.Services.GetRequiredService<ILoggerFactory>().CreateLogger("SieveQ.Cli");
        var run = host.Services.GetRequiredService<ComponentRun<T>>();
        try
        {
            await host.StartAsync(stop).ConfigureAwait(false);
        }
        catch (OptionsValidationException e)
        {
            return await RefuseAsync(host, log, $"{name}: invalid options: {string.Join("; ", e.Failures)}").ConfigureAwait(false);
        }
        catch (ComponentStartException e)
        {
            return await RefuseAsync(host, log, e.Message).ConfigureAwait(false);
        }
        catch (TelemetryStartException e)
        {
            return await RefuseAsync(host, log, $"{name}: {e.Message}").ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // stopped while starting: the hosted service released what it had started
            return 0;
        }
        if (TelemetryRegistration.ScrapeUrl(host.Services) is { } scrape)
        {
            Console.WriteLine($"{name} metrics on {scrape}");
        }
        await host.WaitForShutdownAsync(stop).ConfigureAwait(false);
        return run.ExitCode;
    }

    private static async Task<int> RefuseAsync(IHost host, ILogger log, string message)
    {
        // Both: stderr is what a console user and `sieveq up` read, the log what a service manager keeps.
        log.LogError("{Reason}", message);
        await Console.Error.WriteLineAsync(message).ConfigureAwait(false);
        Environment.ExitCode = RefusedAtStart;
        // The Windows service lifetime has already told the service control manager "running" (it does so before
        // the hosted services start): stopping the host tells it "stopped" instead of leaving it to notice the exit
        // (Wine's does not, and shows the service running forever).
        try
        {
            await host.StopAsync(CancellationToken.None).ConfigureAwait(false);
        }
        catch (Exception e) when (e is InvalidOperationException or OperationCanceledException or AggregateException)
        {
            log.LogWarning("stopping after the refused start: {Reason}", e.Message);
        }
        return RefusedAtStart;
    }

    /// <summary>Logs on stderr like every SieveQ process, without ASP.NET Core's line per request; the event log on Windows.</summary>
    private static void ConfigureLogging(ILoggingBuilder logging, LogLevel level)
    {
        logging.ClearProviders()
            .SetMinimumLevel(level)
            .AddFilter("Microsoft.AspNetCore", LogLevel.Warning)
            .AddFilter("Microsoft.Hosting.Lifetime", LogLevel.Warning)
            .AddConsole(o => o.LogToStandardErrorThreshold = LogLevel.Trace)
            .AddSimpleConsole(o =>
            {
                o.SingleLine = true;
                o.TimestampFormat = "HH:mm:ss.fff ";
            });
        // UseWindowsService adds the event log itself when run by the service control manager; a console run on Windows gets it here.
        if (OperatingSystem.IsWindows() && !WindowsServiceHelpers.IsWindowsService())
        {
            AddEventLog(logging);
        }
    }

    [System.Runtime.Versioning.SupportedOSPlatform("windows")]
    private static void AddEventLog(ILoggingBuilder logging) => logging.AddEventLog(s => s.SourceName = "SieveQ");

    /// <summary>
    /// UseSystemd only recognises a process whose parent is systemd. A unit whose ExecStart goes through a wrapper
    /// (a shell, a script, NotifyAccess=all) still names its socket in NOTIFY_SOCKET, and sd_notify's contract is
    /// to notify whenever that is set, so the systemd lifetime is used then too.
    /// </summary>
    private static void UseSystemdWhenAskedToNotify(IServiceCollection services)
    {
        if (OperatingSystem.IsWindows() || SystemdHelpers.IsSystemdService() || string.IsNullOrEmpty(Environment.GetEnvironmentVariable("NOTIFY_SOCKET")))
        {
            return;
        }
        services.AddSingleton<ISystemdNotifier, SystemdNotifier>();
        services.AddSingleton<IHostLifetime, SystemdLifetime>();
    }

    /// <summary>From <c>$WATCHDOG_USEC</c>: how often systemd expects <c>WATCHDOG=1</c> (null: no watchdog).</summary>
    public static TimeSpan? WatchdogInterval =>
        long.TryParse(Environment.GetEnvironmentVariable("WATCHDOG_USEC"), out var usec) && usec > 0 ? TimeSpan.FromMicroseconds(usec) : null;
}

/// <summary>The component's start and, once it has run, the command's exit code.</summary>
internal sealed class ComponentRun<T>(string name, Func<T, ILoggerFactory, CancellationToken, Task<RunningComponent>> start)
    where T : class
{
    public string Name { get; } = name;

    public Func<T, ILoggerFactory, CancellationToken, Task<RunningComponent>> Start { get; } = start;

    public int ExitCode { get; set; }
}

internal sealed class ComponentOptionsValidator<T>(string name, Func<T, string?> validate) : IValidateOptions<ComponentOptions<T>>
    where T : class
{
    public ValidateOptionsResult Validate(string? optionsName, ComponentOptions<T> options)
    {
        if (options.Value is null)
        {
            return ValidateOptionsResult.Fail($"{name}: no options");
        }
        return validate(options.Value) is { } problem ? ValidateOptionsResult.Fail(problem) : ValidateOptionsResult.Success;
    }
}

/// <summary>
/// The component as the host's one hosted service. Its start returns only when the component is ready, so the
/// host's "started" (systemd's READY=1) means ready; then it waits as <see cref="RunUntilStopped"/> does, and a
/// component that ends by itself stops the host with its exit code.
/// </summary>
internal sealed class ComponentService<T> : IHostedService, IDisposable
    where T : class
{
    private readonly ComponentRun<T> _run;
    private readonly T _options;
    private readonly ILoggerFactory _logs;
    private readonly IHostApplicationLifetime _lifetime;
    private readonly ISystemdNotifier? _systemd;
    private readonly CancellationTokenSource _stopping = new();
    private RunningComponent? _component;
    private Task _waiting = Task.CompletedTask;
    private Task _watchdog = Task.CompletedTask;

    public ComponentService(ComponentRun<T> run, IOptions<ComponentOptions<T>> options, ILoggerFactory logs, IHostApplicationLifetime lifetime, IServiceProvider services)
    {
        _run = run;
        _options = options.Value.Value!;
        // Components log through the host's providers, each kind of message rate-limited (an attacker's refused
        // connections must not flood the log). Not disposed here: the host owns the factory.
        _logs = new RateLimitedLoggerFactory(logs);
        _lifetime = lifetime;
        _systemd = services.GetService<ISystemdNotifier>();
    }

    public async Task StartAsync(CancellationToken cancellationToken)
    {
        var component = await _run.Start(_options, _logs, cancellationToken).ConfigureAwait(false);
        _component = component;
        _waiting = WaitThenStopHostAsync(component);
        if (_systemd is { IsEnabled: true } && ComponentHost.WatchdogInterval is { } interval)
        {
            _watchdog = RunUntilStopped.EverySecondsAsync(interval / 2, _ =>
            {
                _systemd.Notify(new ServiceState("WATCHDOG=1"));
                return Task.CompletedTask;
            }, _stopping.Token);
        }
    }

    private async Task WaitThenStopHostAsync(RunningComponent component)
    {
        _run.ExitCode = await RunUntilStopped.WaitAsync(_stopping.Token, component.Completion, component.What, component.StatusJson).ConfigureAwait(false);
        _lifetime.StopApplication();
    }

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        await _stopping.CancelAsync().ConfigureAwait(false);
        await _waiting.ConfigureAwait(false);
        await _watchdog.ConfigureAwait(false);
        if (_component is null)
        {
            return;
        }
        try
        {
            // The host's shutdown timeout cancels the token: a component that does not stop within the grace is left to the exit.
            await _component.Stop().AsTask().WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            _logs.CreateLogger("SieveQ.Cli").LogWarning("{Name} did not stop within {Grace}", _run.Name, ComponentHost.StopGrace);
        }
    }

    public void Dispose() => _stopping.Dispose();
}
