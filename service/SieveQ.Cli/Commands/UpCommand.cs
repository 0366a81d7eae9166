using System.CommandLine;
using System.Globalization;
using System.Text.Json;
using SieveQ.Cli.ConsoleCertificates;
using SieveQ.Cli.Running;
using SieveQ.Controller;
using SieveQ.Controller.Orchestration;
using SieveQ.Deployment;
using SieveQ.Rules;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq up`: the whole product on loopback, each component its own process (4 replica-SQs, 2
/// pre-SQs, an agent, and a demo sender and receiver that use the agent), with a live line of
/// delivered messages/s and latency. Ctrl-C (or --duration) stops everything cleanly.
/// </summary>
internal static class UpCommand
{
    public const string Name = "up";

    /// <summary>
    /// How long `up` may take to stop once told to: it stops its components one after the other, each with a grace
    /// of 10 s and then a kill, so System.CommandLine's default of 2 s before it ends the process left some running.
    /// </summary>
    public static readonly TimeSpan StopBound = TimeSpan.FromMinutes(5);

    public static Command Build()
    {
        var dir = DeploymentOption.WithDefault("Deployment directory (created on first run).");
        var fresh = new Option<bool>("--fresh") { Description = "Delete the deployment directory first (new keys, empty state)." };
        var rate = new Option<int>("--rate") { Description = "Demo messages per second over all senders (0: no demo traffic).", DefaultValueFactory = _ => 1000 };
        var size = new Option<int>("--size") { Description = "Demo message size in bytes.", DefaultValueFactory = _ => 500 };
        var duration = new Option<string?>("--duration") { Description = "Stop after this long (e.g. 30s); default: until Ctrl-C." };
        var logLevel = new Option<string>("--log-level") { Description = "Components' log level (their logs go to DIR/logs).", DefaultValueFactory = _ => "warning" };
        var rules = new Option<FileInfo?>("--rules")
        {
            Description = "Create the deployment with this rule set (JSON) enforced at stage (f), signed by the deployment's new administrator key. "
                + "For a deployment that exists already, use `sieveq rules push` (or --fresh).",
        };
        var otlp = new Option<string?>("--otlp-endpoint")
        {
            Description = "Every component exports metrics and traces over OTLP/HTTP to this collector (default: $OTEL_EXPORTER_OTLP_ENDPOINT, which the components inherit).",
        };
        var consoleTls = new Option<string?>("--console-tls")
        {
            Description = "The web console's TLS: auto (default; a certificate for localhost from the deployment's own CA, made on the first run, "
                + "renewed before its end; trust DIR/keys/console-ca.crt in the browser) or off (http:// on loopback).",
        };
        var consoleCert = new Option<FileInfo?>("--console-cert") { Description = "Serve the console with this PEM certificate instead (with --console-key)." };
        var consoleKey = new Option<FileInfo?>("--console-key") { Description = "The --console-cert's PEM private key." };
        var cmd = new Command(Name, "Run a complete local SieveQ deployment on loopback (Ctrl-C stops it).")
        {
            dir, fresh, rate, size, duration, rules, logLevel, otlp, consoleTls, consoleCert, consoleKey,
        };
        cmd.SetAction(async (parse, ct) =>
        {
            var d = parse.GetValue(dir)!.FullName;
            var limit = parse.GetValue(duration) is { } text ? ClusterSupport.ParseDuration(text) : Timeout.InfiniteTimeSpan;
            var r = parse.GetValue(rate);
            var bytes = parse.GetValue(size);
            if (r < 0 || bytes is < 8 or > 65_536)
            {
                Console.Error.WriteLine("--rate must be >= 0 and --size 8..65536");
                return 2;
            }
            var (tlsChoice, tlsError) = ConsoleTlsChoice.Parse(parse.GetValue(consoleTls), parse.GetValue(consoleCert)?.FullName, parse.GetValue(consoleKey)?.FullName);
            if (tlsChoice is null)
            {
                Console.Error.WriteLine($"error: {tlsError}");
                return 2;
            }
            UpConsoleTls? providedTls = null;
            if (tlsChoice is ConsoleTlsChoice.Provided provided)
            {
                // Checked before anything is created or started; the console checks it again when it loads it.
                try
                {
                    providedTls = UpConsoleTls.Provide(provided, TimeProvider.System);
                }
                catch (DeploymentException e)
                {
                    Console.Error.WriteLine($"error: {e.Message}");
                    return 1;
                }
            }
            using var providedTlsOwner = providedTls;
            if (parse.GetValue(fresh) && Directory.Exists(d))
            {
                Directory.Delete(d, recursive: true);
            }
            var exists = File.Exists(Path.Combine(d, DeploymentFile.FileName));
            byte[]? ruleSet = null;
            if (parse.GetValue(rules) is { } rulesFile)
            {
                if (exists)
                {
                    Console.Error.WriteLine($"error: {d} already holds a deployment; push the rule set with `sieveq rules push {rulesFile.FullName} --deployment {d} --key ...`, or add --fresh");
                    return 1;
                }
                try
                {
                    ruleSet = File.ReadAllBytes(rulesFile.FullName);
                    var compiled = RuleSetLoader.CompileUnsigned(ruleSet);
                    Console.WriteLine($"rule set       {compiled.Document.Name ?? rulesFile.Name} version {compiled.Version}: {compiled.Summary.Rules} rules, {compiled.Summary.Literals} literal patterns");
                }
                catch (Exception e) when (e is RuleSetException or IOException or UnauthorizedAccessException)
                {
                    Console.Error.WriteLine($"error: --rules {rulesFile.FullName}: {e.Message}");
                    return 1;
                }
            }
            DeploymentConfig cfg;
            try
            {
                cfg = exists
                    ? DeploymentFile.Load(d)
                    : DeploymentBootstrap.Create(d, new LocalDeploymentSpec { BasePort = PortPlan.FindFreeBase(4, 2), RuleSet = ruleSet });
            }
            catch (DeploymentException e)
            {
                Console.Error.WriteLine($"error: {e.Message}");
                return 1;
            }
            ControllerConfig controller;
            try
            {
                controller = ControllerConfig.EnsureLocal(cfg);
            }
            catch (DeploymentException e)
            {
                Console.Error.WriteLine($"error: {e.Message}");
                return 1;
            }
            DeployCommands.PrintEndpoints(cfg);
            if (DeploymentRules.PinnedAdministrator(cfg) is { } admin)
            {
                var keyFile = Path.Combine(cfg.Resolve(cfg.KeyDirectory), DeploymentRules.AdministratorKeyName + ".pem");
                Console.WriteLine($"  administrator  key {admin.KeyId}{(File.Exists(keyFile) ? $" in {keyFile}" : "")} (--key of `sieveq enrol`, `sieveq route`, `sieveq rules push`)");
            }
            ScrapePorts scrape;
            try
            {
                scrape = ScrapePorts.Plan(cfg, parse.GetValue(otlp));
            }
            catch (DeploymentException e)
            {
                Console.Error.WriteLine($"error: {e.Message}");
                return 1;
            }
            scrape.Print();
            var logs = Path.Combine(d, "logs");
            Console.WriteLine($"  logs           {logs}");
            using var stop = new StopSignal(ct);
            stop.StopAfter(limit);
            await using var processes = new ComponentProcesses(a => ClusterProcesses.SelfCommand(a), logs);
            processes.Exited += (name, code) => Console.WriteLine($"!! {name} exited with code {code} (see {processes.LogPath(name)})");
            await using var consoleProcess = new ComponentProcesses(ConsoleProcess.Command, logs);
            consoleProcess.Exited += (name, code) => Console.WriteLine($"!! {name} exited with code {code} (see {consoleProcess.LogPath(name)})");
            var live = new LiveFigures();
            try
            {
                var consoleUrl = await InitConsoleAsync(cfg, stop.Token).ConfigureAwait(false);
                using var preparedTls = consoleUrl is null || providedTls is not null
                    ? null
                    : UpConsoleTls.Prepare(tlsChoice, cfg.Resolve(cfg.KeyDirectory), consoleUrl.StartsWith("https://", StringComparison.Ordinal), TimeProvider.System);
                var tls = consoleUrl is null
                    ? UpConsoleTls.None
                    : providedTls ?? preparedTls!;
                foreach (var line in tls.Lines)
                {
                    Console.WriteLine(line);
                }
                var started = DateTime.UtcNow;
                // The controller first: its port was found free a moment ago, and every connection the components open
                // takes a loopback port from the same range, so a controller started last could find its port taken.
                var launch = new LaunchOptions { LogLevel = parse.GetValue(logLevel)!, ComponentArguments = scrape.ArgumentsFor };
                var plan = Path.Combine(d, LocalLaunchPlan.FileName);
                LocalLaunchPlan.For(cfg, launch).Save(plan);
                await StartControllerAsync(cfg, controller, processes, parse.GetValue(logLevel)!, [.. scrape.ArgumentsFor(ScrapePorts.ControllerName), "--launch-plan", plan],
                    stop.Token).ConfigureAwait(false);
                // The replica-SQs and pre-SQs are the controller's children, started at its administrator's request: the
                // process that replaces a suspected pre-SQ or recovers a replica is the one that owns it (docs/orchestration.md).
                using var starter = new ControllerComponentStarter(cfg, controller);
                await LocalDeploymentLauncher.LaunchAsync(cfg, processes, launch with { HostInProcess = starter.StartAsync }, stop.Token).ConfigureAwait(false);
                await StartConsoleAsync(cfg, consoleUrl, tls, consoleProcess, stop.Token).ConfigureAwait(false);
                var renewal = tls.Local is { } local
                    ? new LocalConsoleCertificateRenewal(local, TimeProvider.System, line => Console.WriteLine($"[{DateTime.Now:HH:mm:ss}] {line}")).RunAsync(stop.Token)
                    : Task.CompletedTask;
                Console.WriteLine($"all components healthy after {(DateTime.UtcNow - started).TotalSeconds:0.0} s; Ctrl-C stops everything");
                StartDemo(cfg, processes, live, r, bytes);
                try
                {
                    await ReportAsync(cfg, live, stop.Token).ConfigureAwait(false);
                }
                finally
                {
                    await renewal.ConfigureAwait(false);
                }
            }
            catch (OperationCanceledException) when (stop.IsStopRequested)
            {
                // Ctrl-C, SIGTERM or --duration
            }
            catch (DeploymentException e)
            {
                Console.Error.WriteLine($"error: {e.Message}");
                await consoleProcess.StopAllAsync(TimeSpan.FromSeconds(5)).ConfigureAwait(false);
                await processes.StopAllAsync(TimeSpan.FromSeconds(5)).ConfigureAwait(false);
                return 1;
            }
            Console.WriteLine("stopping ...");
            await consoleProcess.StopAllAsync(TimeSpan.FromSeconds(10)).ConfigureAwait(false);
            await processes.StopAllAsync(TimeSpan.FromSeconds(10)).ConfigureAwait(false);
            Console.WriteLine($"stopped. delivered {live.Delivered} messages in all.");
            return 0;
        });
        return cmd;
    }

    /// <summary>The controller, before the components it watches (it reads their health as they come); `sieveq admin --key DIR/keys/management-*.pem` talks to it.</summary>
    private static async Task StartControllerAsync(DeploymentConfig cfg, ControllerConfig controller, ComponentProcesses processes, string logLevel,
        IReadOnlyList<string> telemetry, CancellationToken ct)
    {
        processes.Start(ScrapePorts.ControllerName, [.. (string[])["controller", "--deployment", cfg.BaseDirectory, "--log-level", logLevel], .. telemetry]);
        var healthy = await DeploymentHealth.WaitHealthyAsync(
            async () => [await DeploymentHealth.ProbeAsync("controller", "controller", controller.Url, ControllerNames.Service, TimeSpan.FromSeconds(1), ct, controller.Pin()).ConfigureAwait(false)],
            TimeSpan.FromSeconds(30), ct).ConfigureAwait(false);
        if (!healthy)
        {
            var log = processes.LogPath("controller");
            var tail = File.Exists(log) ? string.Join('\n', File.ReadLines(log).TakeLast(10)) : "(no log)";
            throw new DeploymentException($"the controller did not answer on {controller.Url} within 30 s; the end of {log}:\n{tail}");
        }
        Console.WriteLine($"  controller     {controller.Url}  (sieveq admin status --deployment {cfg.BaseDirectory} --key {ControllerConfig.LocalKeyFile(cfg, Controller.Access.ManagementRole.Viewer)})");
    }

    /// <summary>
    /// The console's set-up, before the controller starts (the controller pins the console's key at start). The first
    /// administrator's password is printed here, the one time it exists in clear.
    /// </summary>
    private static async Task<string?> InitConsoleAsync(DeploymentConfig cfg, CancellationToken ct)
    {
        if (!ConsoleProcess.IsBuilt)
        {
            Console.WriteLine($"  console        not started: {ConsoleProcess.Dll} is missing (build admin-ui/SieveQ.AdminUi)");
            return null;
        }
        var (code, lines, errors) = await ConsoleProcess.InitAsync(cfg.BaseDirectory, ct).ConfigureAwait(false);
        if (code != 0)
        {
            throw new DeploymentException($"the console's set-up failed: {errors.Trim()}");
        }
        foreach (var line in lines.Where(l => l.StartsWith("administrator ", StringComparison.Ordinal)))
        {
            Console.WriteLine($"  console login  {line}  (shown once: note it now; `SieveQ.AdminUi add-user` adds accounts)");
        }
        return lines.FirstOrDefault(l => l.StartsWith("console ", StringComparison.Ordinal))?["console ".Length..];
    }

    /// <summary>
    /// Starts the console on console.json's address and port, https:// with the certificate <paramref name="tls"/> gives
    /// it, and waits until it answers, trusting only that certificate (or its CA).
    /// </summary>
    private static async Task StartConsoleAsync(DeploymentConfig cfg, string? consoleJsonUrl, UpConsoleTls tls, ComponentProcesses console, CancellationToken ct)
    {
        if (consoleJsonUrl is null)
        {
            return;
        }
        var url = tls.Url(consoleJsonUrl);
        console.Start("console", ["serve", "--deployment", cfg.BaseDirectory, .. tls.ServeArguments(url)]);
        using var http = new HttpClient(tls.ProbeHandler(), disposeHandler: true) { Timeout = TimeSpan.FromSeconds(2) };
        var deadline = DateTime.UtcNow.AddSeconds(30);
        string? lastError = null;
        while (DateTime.UtcNow < deadline)
        {
            try
            {
                using var reply = await http.GetAsync(new Uri(new Uri(url), "/healthz"), ct).ConfigureAwait(false);
                if (reply.IsSuccessStatusCode)
                {
                    Console.WriteLine($"  console        {url}");
                    return;
                }
            }
            catch (HttpRequestException e)
            {
                // not listening yet, or (kept for the message) a certificate `up` does not trust
                lastError = e.InnerException?.Message ?? e.Message;
            }
            catch (TaskCanceledException) when (!ct.IsCancellationRequested)
            {
                // this attempt timed out
            }
            await Task.Delay(200, ct).ConfigureAwait(false);
        }
        throw new DeploymentException($"the console did not answer on {url} within 30 s{(lastError is null ? "" : $" (last: {lastError})")} (see {console.LogPath("console")})");
    }

    private static void StartDemo(DeploymentConfig cfg, ComponentProcesses processes, LiveFigures live, int rate, int size)
    {
        if (rate == 0 || cfg.Agents.Count == 0)
        {
            return;
        }
        var agent = cfg.Agents[0];
        var socket = cfg.Resolve(agent.Socket);
        var receiver = agent.Receivers[0];
        processes.Start("demo-receiver", ["demo", "receive", "--socket", socket, "--receiver", receiver.ToString(CultureInfo.InvariantCulture)], live.OnLine);
        var perSender = Math.Max(1, rate / agent.Senders.Count);
        foreach (var s in agent.Senders)
        {
            processes.Start($"demo-sender-{s}", ["demo", "send", "--socket", socket, "--sender", s.ToString(CultureInfo.InvariantCulture),
                "--receiver", receiver.ToString(CultureInfo.InvariantCulture), "--rate", perSender.ToString(CultureInfo.InvariantCulture), "--size", size.ToString(CultureInfo.InvariantCulture)]);
        }
    }

    /// <summary>The live line, once a second until stopped; health is probed every fifth.</summary>
    private static Task ReportAsync(DeploymentConfig cfg, LiveFigures live, CancellationToken ct)
    {
        var healthy = "?";
        var tick = 0;
        return RunUntilStopped.EverySecondAsync(async stop =>
        {
            if (tick++ % 5 == 0)
            {
                var all = await DeploymentHealth.ProbeAllAsync(cfg, TimeSpan.FromSeconds(1), stop).ConfigureAwait(false);
                healthy = $"{all.Count(h => h.Healthy)}/{all.Count} healthy";
            }
            Console.WriteLine($"[{DateTime.Now:HH:mm:ss}] {live.Line(Environment.TickCount64)}  | {healthy}");
        }, ct);
    }

    /// <summary>The demo receiver's once-a-second JSON lines, as last seen.</summary>
    internal sealed class LiveFigures
    {
        /// <summary>A figures line older than this is not the present: the receiver has stopped reporting.</summary>
        public const long StaleAfterMs = 3_000;

        private long _lastLineMs = -1;

        private readonly Lock _lock = new();
        private double _rate;
        private long _delivered;
        private double _p50;
        private double _p99;

        public double Rate { get { lock (_lock) { return _rate; } } }
        public long Delivered { get { lock (_lock) { return _delivered; } } }
        public double P50 { get { lock (_lock) { return _p50; } } }
        public double P99 { get { lock (_lock) { return _p99; } } }

        public void OnLine(string line) => OnLine(line, Environment.TickCount64);

        public void OnLine(string line, long nowMs)
        {
            try
            {
                using var doc = JsonDocument.Parse(line);
                var root = doc.RootElement;
                lock (_lock)
                {
                    _rate = Number(root, "rate", _rate);
                    _delivered = (long)Number(root, "delivered", _delivered);
                    _p50 = Number(root, "p50_ms", _p50);
                    _p99 = Number(root, "p99_ms", _p99);
                    _lastLineMs = nowMs;
                }
            }
            catch (JsonException)
            {
                // not a figures line
            }
        }

        /// <summary>
        /// The live line's figures. Latency is shown only for a second in which something was delivered: the last
        /// p50/p99 of a deployment that has stopped delivering would say it still works.
        /// </summary>
        public string Line(long nowMs)
        {
            lock (_lock)
            {
                if (_lastLineMs < 0)
                {
                    return $"delivered       - msg/s  total         -  (no figures from the demo receiver yet)";
                }
                var age = nowMs - _lastLineMs;
                if (age > StaleAfterMs)
                {
                    return $"delivered       - msg/s  total {_delivered,9}  (no figures from the demo receiver for {age / 1000} s)";
                }
                var latency = _rate > 0
                    ? $"p50 {_p50,6:0.00} ms  p99 {_p99,6:0.00} ms"
                    : "p50      - ms  p99      - ms (nothing delivered)";
                return $"delivered {_rate,7:0} msg/s  total {_delivered,9}  {latency}";
            }
        }

        private static double Number(JsonElement e, string name, double fallback) =>
            e.TryGetProperty(name, out var v) && v.ValueKind == JsonValueKind.Number ? v.GetDouble() : fallback;
    }
}
