using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using System.Text.Json;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Cli.Bench;
using SieveQ.Controller.Audit;
using SieveQ.Controller.Orchestration;
using SieveQ.Deployment;
using SieveQ.Sdk;
using SieveQ.Sdk.Sender;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq bench recovery`: the deployment of `sieveq up` under a paced load (1,000 msg/s by default); a steady
/// stretch first (the baseline), then a recovery round (every replica-SQ restarted in turn on its kept state, the
/// current leader first, by the controller's own <see cref="ReplicaRecovery"/> over the processes), then the rest of the
/// load. Latency is counted by the window a message was sent in; the figure is the worst window's p99 over the
/// steady p99, in the same run, and every message sent must be delivered (the target: x3 at most, none lost).
/// </summary>
internal static class BenchRecoveryCommand
{
    public static Command Build()
    {
        var size = new Option<int>("--size") { Description = "Message size in bytes.", DefaultValueFactory = _ => 500 };
        var rate = new Option<int>("--rate") { Description = "Messages per second offered (the paper's 1,000 by default).", DefaultValueFactory = _ => 1000 };
        // Parsed as bench e2e's --phase, hence its error wording for a malformed one.
        var steady = new Option<string>("--steady") { Description = "Measured load before the round (the baseline).", DefaultValueFactory = _ => "15s" };
        var window = new Option<string>("--window") { Description = "Length of each measured window of the round.", DefaultValueFactory = _ => "2s" };
        var duration = new Option<string>("--duration") { Description = "Measured load in all: the steady stretch, the round and what is left after it (the round must end within it).", DefaultValueFactory = _ => "150s" };
        var warmup = new Option<string>("--warmup") { Description = "Unmeasured load before (seven fresh processes JIT compiling on two cores).", DefaultValueFactory = _ => "20s" };
        var json = new Option<FileInfo?>("--json") { Description = "Write the figures as JSON." };
        var keep = new Option<bool>("--keep") { Description = "Keep the deployment directory (logs, the round's audit log) afterwards." };
        var logLevel = new Option<string>("--log-level") { Description = "Components' log level.", DefaultValueFactory = _ => "warning" };
        var cmd = new Command("recovery", "A replica recovery round under load: the worst p99 of the round against the steady load before it, and nothing lost, in one run.")
        {
            size, rate, steady, window, duration, warmup, json, keep, logLevel,
        };
        cmd.SetAction(async (parse, ct) =>
        {
            var parseError = BenchE2eCommand.ParseError(parse.GetValue(rate).ToString(CultureInfo.InvariantCulture), parse.GetValue(duration)!, parse.GetValue(warmup)!,
                parse.GetValue(steady)!, out var rateValue, out var durationValue, out var warmupValue, out var steadyValue);
            if (!BenchE2eCommand.TryDuration(parse.GetValue(window)!, out var windowValue))
            {
                parseError ??= $"--window must be a duration such as 30s, 500ms or 2m, not '{parse.GetValue(window)}'";
            }
            var s = new E2eSettings(parse.GetValue(size), rateValue, durationValue, warmupValue, null, true, parse.GetValue(keep), parse.GetValue(logLevel)!);
            var error = parseError
                ?? BenchE2eCommand.SettingsError(s, TimeSpan.Zero)
                ?? (steadyValue < TimeSpan.FromSeconds(2) || windowValue < TimeSpan.FromMilliseconds(500) || steadyValue + (4 * windowValue) > durationValue
                    ? "--steady must be at least 2s, --window at least 500ms, and --duration hold the steady stretch and a round"
                    : null);
            if (error is not null)
            {
                Console.Error.WriteLine($"error: {error}");
                return 2;
            }
            ClusterSupport.PreferInlineSocketCompletions();
            Console.WriteLine($"bench recovery: {s.Rate} msg/s of {s.Size} B, {steadyValue.TotalSeconds:0} s steady, then a recovery round in {windowValue.TotalSeconds:0.#} s windows, {s.Duration.TotalSeconds:0} s measured in all");
            var phases = new MeasuredPhases();
            var round = new RoundUnderLoad(phases, steadyValue, windowValue, s.Duration);
            E2eFigures figures;
            try
            {
                figures = await E2eSieveRun.RunAsync(s, "recovery", null, ct, round.RunAsync, phases, launched: round.Launched).ConfigureAwait(false);
            }
            catch (Exception e) when (e is DeploymentException or SieveQConfigurationException or SieveQUnavailableException)
            {
                Console.Error.WriteLine($"error: {e.Message}");
                return 1;
            }
            var report = RecoveryRoundReport.From(phases, round.Done, round.Status, round.Seconds, figures);
            foreach (var line in report.Lines())
            {
                Console.WriteLine(line);
            }
            if (round.Outlasted)
            {
                Console.Error.WriteLine("the round outlasted the measured load: give a longer --duration");
            }
            if (parse.GetValue(json) is { } j)
            {
                var doc = new
                {
                    benchmark = "recovery",
                    size = s.Size,
                    rate = s.Rate,
                    steadySeconds = steadyValue.TotalSeconds,
                    windowSeconds = windowValue.TotalSeconds,
                    durationSeconds = s.Duration.TotalSeconds,
                    machine = new { Environment.ProcessorCount, os = Environment.OSVersion.ToString() },
                    recovery = report.Json(),
                };
                await File.WriteAllTextAsync(j.FullName, JsonSerializer.Serialize(doc, new JsonSerializerOptions { WriteIndented = true }), ct).ConfigureAwait(false);
                Console.WriteLine($"wrote {j.FullName}");
            }
            return round.Done && !round.Outlasted && report.Lost == 0 && report.Extra == 0 ? 0 : 1;
        });
        return cmd;
    }

    /// <summary>The measured part of the run: the steady phase, the round in windows, the rest.</summary>
    private sealed class RoundUnderLoad(MeasuredPhases phases, TimeSpan steady, TimeSpan window, TimeSpan duration)
    {
        private ComponentProcesses? _processes;
        private LaunchOptions? _launch;

        public bool Done { get; private set; }
        public string Status { get; private set; } = "not run";
        public double Seconds { get; private set; }
        public bool Outlasted { get; private set; }

        public void Launched(ComponentProcesses processes, LaunchOptions launch)
        {
            _processes = processes;
            _launch = launch;
        }

        public async Task RunAsync(DeploymentConfig cfg, string dir, CancellationToken ct)
        {
            var start = Stopwatch.GetTimestamp();
            // Not disposed: that would stop every process, which the run's teardown does.
            var orchestrator = new LocalProcessOrchestrator(_processes!, LocalLaunchPlan.For(cfg, _launch!).CommandLines(),
                (c, t) => DeploymentComponentHealth.HealthyAsync(cfg, c, t));
            await using var audit = AuditLog.Open(Path.Combine(dir, "bench-audit"));
            var recovery = new ReplicaRecovery(new AuditedOrchestration(orchestrator, audit), new DeploymentReplicaProgress(cfg), null, NullLogger.Instance);
            phases.Open(PhaseArm.Baseline, "steady", start);
            await Task.Delay(steady, ct).ConfigureAwait(false);
            var roundStart = Stopwatch.GetTimestamp();
            phases.Close(roundStart);
            var round = recovery.RecoverRoundAsync("bench recovery", "every replica-SQ (bench)", id => $"replica-SQ {id} (bench)");
            while (!round.IsCompleted)
            {
                phases.Open(PhaseArm.Treatment, "round", Stopwatch.GetTimestamp());
                // The last window the phase table holds stays open to the round's end.
                await (phases.Phases.Count < MeasuredPhases.MaxPhases - 1 ? Task.WhenAny(round, Task.Delay(window, ct)) : (Task)round).ConfigureAwait(false);
                phases.Close(Stopwatch.GetTimestamp());
            }
            var outcome = await round.ConfigureAwait(false);
            var roundEnd = Stopwatch.GetTimestamp();
            (Done, Status, Seconds) = (outcome.Done, outcome.Status, Stopwatch.GetElapsedTime(roundStart, roundEnd).TotalSeconds);
            var left = duration - Stopwatch.GetElapsedTime(start, roundEnd);
            Outlasted = left <= TimeSpan.Zero;
            if (!Outlasted)
            {
                phases.Open(PhaseArm.Baseline, "after", roundEnd);
                await Task.Delay(left, ct).ConfigureAwait(false);
                phases.Close(Stopwatch.GetTimestamp());
            }
        }
    }
}
