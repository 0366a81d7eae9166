using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using System.Text.Json;
using SieveQ.Cli.Bench;
using SieveQ.Sdk;
using SieveQ.Sdk.Sender;
using SieveQ.Sieve.Diagnostics;
using SieveQ.Deployment;
using SieveQ.Rules;
using SieveQ.Sieve.Hosting.Diagnostics;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq bench e2e`: the deployment of `sieveq up` (4 replica-SQs, 2 pre-SQs, each its own process,
/// every check on) with a load sender and receiver on the SDK in this process, next to direct
/// sender-to-receiver delivery over the same gRPC transport in the same run; reports both and the ratio.
/// With --rules, a second deployment measures the rules' cost (paper 6.4) as an A/B inside one run: its
/// rule set is switched through the ordering, phase by phase, between that rule set and the same rules
/// without patterns (<see cref="RulesAbSwitcher"/>), and latencies are counted by the phase a message was
/// sent in.
/// </summary>
internal static class BenchE2eCommand
{
    public static Command Build()
    {
        var size = new Option<int>("--size") { Description = "Message size in bytes (100, 500, 1000 in the paper).", DefaultValueFactory = _ => 500 };
        var rate = new Option<string>("--rate") { Description = "'max' (as fast as back-pressure allows) or messages per second.", DefaultValueFactory = _ => "max" };
        var duration = new Option<string>("--duration") { Description = "Measured time per run (e.g. 30s).", DefaultValueFactory = _ => "30s" };
        var warmup = new Option<string>("--warmup") { Description = "Unmeasured load before each run (long enough for seven freshly started processes to finish JIT compiling on two cores).", DefaultValueFactory = _ => "20s" };
        var json = new Option<FileInfo?>("--json") { Description = "Write the figures as JSON." };
        var plot = new Option<FileInfo?>("--plot") { Description = "Write a PNG: delivered/s over time and latency percentiles, both runs." };
        var rules = new Option<FileInfo?>("--rules") { Description = "Also measure this rule set's cost (stage f): one more deployment whose rule set alternates, through the ordering, between it and the same rules without patterns." };
        var phase = new Option<string>("--phase") { Description = "With --rules: length of each A/B phase (the measured duration is split into phases, ABBA order).", DefaultValueFactory = _ => "5s" };
        var noDurability = new Option<bool>("--no-durability") { Description = "Replicas without the write-ahead log." };
        var outbox = new Option<bool>("--outbox") { Description = "Senders with their durable outbox, as applications run them (each accepted message fsynced before SendAsync returns); off by default." };
        var trace = new Option<bool>("--trace") { Description = "Profile where the time goes: every process marks a sample of messages at each stage (SIEVEQ_STAGE_TRACE_EVERY, default 64)." };
        var cleartext = new Option<bool>("--cleartext") { Description = "Cleartext HTTP/2 instead of TLS 1.3 on every gRPC link, the sieve's and the direct baseline's (to measure what TLS costs)." };
        var compareTls = new Option<bool>("--compare-tls") { Description = "Measure what TLS costs: the same load through a TLS deployment and a cleartext one, alternating (ABBA) within this run, and the ratios TLS / cleartext of throughput, p50, p99 and CPU per message (no direct baseline)." };
        var rounds = new Option<int?>("--rounds") { Description = "With --compare-tls: rounds of one TLS and one cleartext deployment each (1-10; default 2, i.e. TLS, cleartext, cleartext, TLS)." };
        var keep = new Option<bool>("--keep") { Description = "Keep the deployment directory (logs) afterwards." };
        var logLevel = new Option<string>("--log-level") { Description = "Components' log level (their logs go to the deployment's logs folder; see --keep).", DefaultValueFactory = _ => "warning" };
        var cmd = new Command("e2e", "End-to-end throughput and latency through SieveQ vs direct delivery, in one run.")
        {
            size, rate, duration, warmup, json, plot, rules, phase, noDurability, outbox, cleartext, compareTls, rounds, trace, keep, logLevel,
        };
        cmd.SetAction(async (parse, ct) =>
        {
            if (ParseError(parse.GetValue(rate)!, parse.GetValue(duration)!, parse.GetValue(warmup)!, parse.GetValue(phase)!,
                    out var rateValue, out var durationValue, out var warmupValue, out var phaseLength) is { } parseError)
            {
                Console.Error.WriteLine($"error: {parseError}");
                return 2;
            }
            var s = new E2eSettings(
                parse.GetValue(size),
                rateValue,
                durationValue,
                warmupValue,
                parse.GetValue(rules)?.FullName,
                !parse.GetValue(noDurability),
                parse.GetValue(keep),
                parse.GetValue(logLevel)!)
            {
                SenderOutbox = parse.GetValue(outbox),
                Cleartext = parse.GetValue(cleartext),
                CompareTls = parse.GetValue(compareTls),
                Rounds = parse.GetValue(rounds),
                Plot = parse.GetValue(plot) is not null,
            };
            if (SettingsError(s, phaseLength) is { } error)
            {
                Console.Error.WriteLine($"error: {error}");
                return 2;
            }
            byte[]? ruleSet = null;
            byte[]? withoutPatterns = null;
            if (s.Rules is { } rulesFile)
            {
                try
                {
                    var compiled = RuleSetLoader.CompileUnsigned(File.ReadAllBytes(rulesFile));
                    Console.WriteLine($"rule set     {compiled.Document.Name ?? Path.GetFileName(rulesFile)} version {compiled.Version}: {compiled.Summary.Rules} rules, "
                        + $"{compiled.Summary.Literals} literal patterns, {compiled.Summary.Regexes} regexes (signed for the run with a fresh administrator key)");
                    ruleSet = File.ReadAllBytes(rulesFile);
                    withoutPatterns = RuleSetVariants.WithVersion(RuleSetVariants.WithoutPatterns(ruleSet), 1);
                }
                catch (Exception e) when (e is RuleSetException or IOException)
                {
                    Console.Error.WriteLine($"error: --rules {rulesFile}: {e.Message}");
                    return 1;
                }
            }
            if (parse.GetValue(trace))
            {
                // Before anything reads it: the components inherit it, and this process's marks go there too.
                var folder = Path.Combine(Path.GetTempPath(), $"sieveq-trace-{Environment.ProcessId}");
                Environment.SetEnvironmentVariable(StageTrace.FolderVariable, folder);
                Console.WriteLine($"stage trace  {folder}");
            }
            ClusterSupport.PreferInlineSocketCompletions();
            if (s.CompareTls)
            {
                return await BenchE2eCompareTls.RunAsync(s, s.Rounds ?? 2, parse.GetValue(json), ct).ConfigureAwait(false);
            }
            var direct = await RunDirectAsync(s, ct).ConfigureAwait(false);
            Print(direct);
            E2eFigures sieve;
            RulesAbReport? rulesAb = null;
            try
            {
                sieve = await RunSieveAsync(s, "sieveq", null, ct).ConfigureAwait(false);
                if (ruleSet is not null && withoutPatterns is not null)
                {
                    var count = RulesAbSwitcher.PhaseCount(s.Duration, phaseLength);
                    Console.WriteLine($"rules A/B    one deployment, {count} phases of {s.Duration.TotalSeconds / count:0.#} s in ABBA order: the rule set (+rules) and the same rules "
                        + $"without patterns (-patterns), switched through the ordering; {RulesAbSwitcher.Settle.TotalSeconds:0.#} s after each switch not counted");
                    var phases = new MeasuredPhases();
                    var switcher = new RulesAbSwitcher(ruleSet, withoutPatterns, phaseLength);
                    await RunSieveAsync(s, "A/B", withoutPatterns, ct, (cfg, dir, c) => switcher.RunAsync(cfg, dir, phases, s.Duration, c), phases,
                        switcher.PrimeAsync).ConfigureAwait(false);
                    rulesAb = RulesAbReport.From(phases);
                    foreach (var line in rulesAb.Lines())
                    {
                        Console.WriteLine(line);
                    }
                }
            }
            catch (Exception e) when (e is DeploymentException or SieveQConfigurationException or RuleSetPublishException or SieveQUnavailableException)
            {
                Console.Error.WriteLine($"error: {e.Message}");
                return 1;
            }
            var ratio = BenchRatio.Of(sieve.DeliveredPerSecond, direct.DeliveredPerSecond);
            var cpuRatio = BenchRatio.Of(sieve.Cpu?[^1].MicrosPerMessage ?? double.NaN, direct.Cpu?[^1].MicrosPerMessage ?? double.NaN);
            Console.WriteLine($"ratio (SieveQ / direct) throughput {ratio:0.000}, p50 latency x{BenchRatio.Of(sieve.Latency.P50Ms, direct.Latency.P50Ms):0.0}, CPU per message x{cpuRatio:0.0}");
            if (parse.GetValue(json) is { } j)
            {
                var doc = new
                {
                    benchmark = "e2e",
                    size = s.Size,
                    rate = s.Rate?.ToString(CultureInfo.InvariantCulture) ?? "max",
                    durationSeconds = s.Duration.TotalSeconds,
                    rules = s.Rules,
                    durability = s.Durability,
                    senderOutbox = s.SenderOutbox,
                    transport = s.Cleartext ? "h2c" : "tls13",
                    machine = new { Environment.ProcessorCount, os = Environment.OSVersion.ToString() },
                    sieveq = Json(sieve),
                    direct = Json(direct),
                    ratioThroughput = ratio,
                    ratioCpuPerMessage = double.IsFinite(cpuRatio) ? cpuRatio : (double?)null,
                    rulesAb = rulesAb?.Json(),
                };
                await File.WriteAllTextAsync(j.FullName, JsonSerializer.Serialize(doc, new JsonSerializerOptions { WriteIndented = true }), ct).ConfigureAwait(false);
                Console.WriteLine($"wrote {j.FullName}");
            }
            if (parse.GetValue(plot) is { } p)
            {
                await File.WriteAllBytesAsync(p.FullName, E2ePlot.Render(s, sieve, direct), ct).ConfigureAwait(false);
                Console.WriteLine($"wrote {p.FullName}");
            }
            return 0;
        });
        return cmd;
    }

    /// <summary>What is wrong with the settings, or null; the phase length only matters with --rules.</summary>
    internal static string? SettingsError(E2eSettings s, TimeSpan phaseLength)
    {
        if (s.Size is < DeliveryMeter.StampBytes or > 65_536 || s.Rate is <= 0 || s.Duration <= TimeSpan.Zero || s.Warmup < TimeSpan.Zero)
        {
            return $"--size must be {DeliveryMeter.StampBytes}..65536, --rate 'max' or > 0, --duration > 0, --warmup >= 0";
        }
        if (s.Rounds is not null && !s.CompareTls)
        {
            return "--rounds is only for --compare-tls";
        }
        if (s.CompareTls && CompareTlsConflict(s) is { } conflict)
        {
            return conflict;
        }

        return s.Rules is not null && (phaseLength < TimeSpan.FromSeconds(2) || phaseLength * 2 > s.Duration)
            ? "--phase must be at least 2s and at most half of --duration"
            : null;
    }

    private static string? CompareTlsConflict(E2eSettings s) =>
        s.Rounds is < 1 or > MaxRounds ? $"--rounds must be 1..{MaxRounds}"
        : s.Cleartext ? "--compare-tls runs both transports itself: not with --cleartext"
        : s.Rules is not null ? "--compare-tls does not combine with --rules: one comparison per run"
        : s.Plot ? "--compare-tls has no --plot (it runs no direct baseline): use --json"
        : null;

    private const int MaxRounds = 10;

    /// <summary>Parses --rate ('max' or a whole number) and the durations (30s, 500ms, 2m, or seconds); a message when one is malformed.</summary>
    internal static string? ParseError(string rate, string duration, string warmup, string phase,
        out int? rateValue, out TimeSpan durationValue, out TimeSpan warmupValue, out TimeSpan phaseValue)
    {
        rateValue = null;
        durationValue = warmupValue = phaseValue = default;
        if (rate != "max")
        {
            if (!int.TryParse(rate, NumberStyles.None, CultureInfo.InvariantCulture, out var r))
            {
                return $"--rate must be 'max' or a whole number of messages per second, not '{rate}'";
            }
            rateValue = r;
        }
        return TryDuration(duration, out durationValue) is false ? $"--duration must be a duration such as 30s, 500ms or 2m, not '{duration}'"
            : TryDuration(warmup, out warmupValue) is false ? $"--warmup must be a duration such as 20s, 500ms or 2m, not '{warmup}'"
            : TryDuration(phase, out phaseValue) is false ? $"--phase must be a duration such as 5s, 500ms or 2m, not '{phase}'"
            : null;
    }

    internal static bool TryDuration(string text, out TimeSpan value)
    {
        try
        {
            value = ClusterSupport.ParseDuration(text);
            return true;
        }
        catch (Exception e) when (e is FormatException or OverflowException or ArgumentException)
        {
            value = default;
            return false;
        }
    }

    internal static async Task<E2eFigures> RunSieveAsync(E2eSettings s, string name, byte[]? ruleSet, CancellationToken ct,
        Func<DeploymentConfig, string, CancellationToken, Task>? during = null, MeasuredPhases? phases = null,
        Func<DeploymentConfig, string, CancellationToken, Task>? duringWarmup = null)
    {
        var figures = await E2eSieveRun.RunAsync(s, name, ruleSet, ct, during, phases, duringWarmup).ConfigureAwait(false);
        Print(figures);
        E2eStageReport.Print(figures);
        return figures;
    }

    internal static object Json(E2eFigures f) => new
    {
        sent = f.Sent,
        delivered = f.Delivered,
        seconds = f.Seconds,
        deliveredPerSecond = f.DeliveredPerSecond,
        p50Ms = f.Latency.P50Ms,
        p99Ms = f.Latency.P99Ms,
        meanMs = f.Latency.MeanMs,
        maxMs = f.Latency.MaxMs,
        perSecond = f.PerSecond,
        senderRootsSigned = f.SenderRootsSigned,
        messagesPerRoot = f.MessagesPerRoot,
        cpu = f.Cpu?.Select(c => new { kind = c.Kind, processes = c.Processes, cpuSeconds = c.CpuSeconds, microsPerMessage = double.IsFinite(c.MicrosPerMessage) ? c.MicrosPerMessage : (double?)null }),
        profile = f.Profile?.Select(p => new { stage = p.Stage, samples = p.Samples, firstP50Ms = p.FirstP50Ms, firstP90Ms = p.FirstP90Ms, quorumP50Ms = p.QuorumP50Ms }),
    };

    private static void Print(E2eFigures f)
    {
        Console.WriteLine($"{f.Name,-8} offered {f.Sent / f.Seconds,9:0}/s  delivered {f.DeliveredPerSecond,9:0}/s  p50 {f.Latency.P50Ms,7:0.00} ms  p99 {f.Latency.P99Ms,7:0.00} ms  mean {f.Latency.MeanMs,7:0.00} ms");
        if (f.SenderRootsSigned is { } roots)
        {
            Console.WriteLine($"{f.Name,-8} sender root signatures {roots / f.Seconds,9:0}/s  messages per signature {f.MessagesPerRoot ?? 0,7:0.0}");
        }

        if (f.Cpu is { Count: > 0 } cpu)
        {
            // "bench" is this process: the load generator, the in-process senders and the receiver.
            Console.WriteLine($"{f.Name,-8} CPU per delivered message  " + string.Join("  ", cpu.Select(c => $"{c.Kind}{(c.Processes > 1 ? $" x{c.Processes}" : "")} {c.MicrosPerMessage:0} us"))
                + (cpu.Any(c => c.Kind == CpuAccount.BenchKind) ? "  (bench: load, senders, receiver)" : ""));
        }
    }

    private static async Task<E2eFigures> RunDirectAsync(E2eSettings s, CancellationToken ct)
    {
        var meter = new DeliveryMeter();
        await using var direct = await DirectDelivery.StartAsync(meter, !s.Cleartext, ct).ConfigureAwait(false);
        var paced = s.Rate is not null;
        ValueTask Send(ReadOnlyMemory<byte> m, CancellationToken c) => direct.SendAsync(m, paced, c);
        await PacedSender.RunAsync(Send, s.Size, s.Rate, s.Warmup, ct).ConfigureAwait(false);
        meter.Open(Stopwatch.GetTimestamp(), s.Duration);
        var cpu = CpuAccount.Start();
        var sent = await PacedSender.RunAsync(Send, s.Size, s.Rate, s.Duration, ct).ConfigureAwait(false);
        var used = cpu.Stop();
        var figures = meter.Figures("direct", s.Duration.TotalSeconds, sent);
        return figures with { Cpu = CpuAccount.PerMessage(used, figures.Delivered) };
    }
}

internal sealed record E2eSettings(int Size, int? Rate, TimeSpan Duration, TimeSpan Warmup, string? Rules, bool Durability, bool Keep, string LogLevel)
{
    /// <summary>Whether the SDK senders keep their durable outbox (off: the run measures the sieve, not one fsync per awaited send).</summary>
    public bool SenderOutbox { get; init; }

    /// <summary>Cleartext HTTP/2 on every gRPC link instead of TLS 1.3 (the cost comparison).</summary>
    public bool Cleartext { get; init; }

    /// <summary>Runs TLS and cleartext deployments in turn and reports the ratios (--compare-tls).</summary>
    public bool CompareTls { get; init; }

    /// <summary>--rounds as given: null when absent.</summary>
    public int? Rounds { get; init; }

    /// <summary>Whether --plot was given.</summary>
    public bool Plot { get; init; }
}
