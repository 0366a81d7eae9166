using System.Diagnostics;
using System.Globalization;
using System.Reflection;
using SieveQ.Agent.Hosting;
using SieveQ.Attacks.Attacks;
using SieveQ.Cli.Bench;
using SieveQ.Deployment;
using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Sender;

namespace SieveQ.Attacks;

/// <summary>What one attack run measured.</summary>
internal sealed record AttackFigures(
    AttackSettings Settings,
    string AttackDescription,
    string Countermeasure,
    IReadOnlyList<SecondFigures> Seconds,
    IReadOnlyDictionary<int, (long Sent, long Delivered)> PerSender,
    long Violations,
    IReadOnlyList<string> FirstViolations,
    long AttackApplied,
    long AttackerMessagesDelivered,
    IReadOnlyDictionary<string, long> CountermeasureCounts,
    (double PerSecond, double P50Ms, double P99Ms) BeforeWindow,
    (double PerSecond, double P50Ms, double P99Ms) DuringWindow,
    (double PerSecond, double P50Ms, double P99Ms) AfterWindow,
    string? Watched = null)
{
    /// <summary>The watched component's largest RSS in each window (MiB; NaN when none was read).</summary>
    public (double Before, double During, double After) RssWindows
    {
        get
        {
            var beforeEnd = (int)Settings.Before.TotalSeconds;
            var duringEnd = (int)(Settings.Before + Settings.During).TotalSeconds;
            double Max(Func<SecondFigures, bool> inWindow) =>
                Seconds.Where(inWindow).Select(x => x.RssMiB ?? double.NaN).Where(double.IsFinite).DefaultIfEmpty(double.NaN).Max();
            return (Max(x => x.Second < beforeEnd), Max(x => x.Second >= beforeEnd && x.Second < duringEnd), Max(x => x.Second >= duringEnd));
        }
    }

    public long Lost => PerSender.Values.Sum(v => Math.Max(0, v.Sent - v.Delivered));

    public bool ExactlyOnce => Lost == 0 && Violations == 0;

    public double ThroughputRatio => DuringWindow.PerSecond / BeforeWindow.PerSecond;

    public double P99Ratio => DuringWindow.P99Ms / BeforeWindow.P99Ms;
}

/// <summary>
/// One attack run: a fresh local deployment as `sieveq up` makes it (4 replica-SQs, 2 pre-SQs, each its own
/// process, every check on; the attack may replace one pre-SQ by its compromised twin), the legitimate senders
/// and the receiver on the in-process SDK, a warm-up, then the measured run: before, during and after the attack,
/// a line per second. Afterwards it waits until every accepted legitimate message arrived (or a bound passed)
/// and asks the components what the countermeasure counted.
/// </summary>
internal static class AttackRun
{
    private static readonly TimeSpan DrainBound = TimeSpan.FromSeconds(90);

    public static string SieveqDll =>
        typeof(AttackRun).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "SieveqDll").Value!;

    public static async Task<AttackFigures> RunAsync(AttackSettings s, TextWriter output, CancellationToken ct)
    {
        if (!File.Exists(SieveqDll))
        {
            throw new DeploymentException($"build the CLI first (dotnet build service/SieveQ.Cli -c Release): {SieveqDll} is missing");
        }
        await using var attack = Attack.For(s);
        var shape = attack.Shape;
        var dir = Path.Combine(Path.GetTempPath(), $"sieveq-attack-{Environment.ProcessId}-{Guid.NewGuid():N}"[..48]);
        var spec = new LocalDeploymentSpec
        {
            BasePort = PortPlan.FindFreeBase(4, 2),
            Senders = [.. AttackSettings.LegitimateSenders, .. shape.ExtraSenders],
            Receivers = [AttackSettings.Receiver],
            Durability = true,
        };
        var config = DeploymentBootstrap.Create(dir, spec);
        output.WriteLine($"deployment   {dir}");
        output.WriteLine($"attack       {AttackKinds.Name(s.Kind)}: {attack.Description}");
        output.WriteLine($"countermeasure {attack.Countermeasure}");
        try
        {
            await using var processes = new ComponentProcesses(Command, Path.Combine(dir, "logs"));
            processes.Exited += (name, code) => output.WriteLine($"!! {name} exited with code {code} (see {processes.LogPath(name)})");
            var launch = new LaunchOptions
            {
                StartAgents = false,
                LogLevel = s.LogLevel,
                PreSqOptions = shape.PreSqOptions,
                HostInProcess = (role, id) =>
                {
                    if (role == "replica-sq" && shape.CompromisedReplica == id)
                    {
                        processes.Start(LocalDeploymentLauncher.ReplicaName(id), CompromisedReplicaSqProcess.Args(dir, id));
                        return Task.FromResult(true);
                    }
                    if (role != "pre-sq" || shape.CompromisedPreSq is not { } c || c.Id != id)
                    {
                        return Task.FromResult(false);
                    }
                    processes.Start(LocalDeploymentLauncher.PreSqName(id), CompromisedPreSqProcess.Args(dir, id, c.Stage));
                    return Task.FromResult(true);
                },
            };
            await LocalDeploymentLauncher.LaunchAsync(config, processes, launch, ct).ConfigureAwait(false);
            var context = DeploymentContext.Load(dir);
            var clients = context.ToClientConfiguration();
            var state = Path.Combine(dir, "bench-state");
            var seconds = (int)Math.Ceiling(s.Measured.TotalSeconds);
            var timeline = new DeliveryTimeline(AttackSettings.LegitimateSenders, seconds);
            await using var receiver = SieveQReceiver.Create(clients, AttackSettings.Receiver, Path.Combine(state, "receiver"),
                new SieveQReceiverOptions { AutoCommitEvery = 512, AutoCommitAfter = TimeSpan.FromMilliseconds(50) });
            using var stopReading = CancellationTokenSource.CreateLinkedTokenSource(ct);
            var reading = Task.Run(async () =>
            {
                await foreach (var m in receiver.ReadAllAsync(stopReading.Token).ConfigureAwait(false))
                {
                    timeline.Record(m);
                }
            }, CancellationToken.None);
            var senders = AttackSettings.LegitimateSenders.Select(id => SieveQSender.Create(clients, id, Path.Combine(state, "senders"),
                new SieveQSenderOptions { Outbox = new SenderOutboxOptions { Enabled = false } })).ToList();
            var target = new AttackTarget(dir, config, context, senders, receiver);
            try
            {
                var perSender = s.Rate / senders.Count;
                using var stopLoad = CancellationTokenSource.CreateLinkedTokenSource(ct);
                var loads = senders.Select(x => new LegitimateLoad(x, AttackSettings.Receiver, perSender, s.Size)).ToList();
                var loading = loads.Select(l => Task.Run(() => l.RunAsync(stopLoad.Token), CancellationToken.None)).ToList();
                output.WriteLine($"load         {senders.Count} senders x {perSender} msg/s of {s.Size} B; warm-up {s.Warmup.TotalSeconds:0} s, then "
                    + $"{s.Before.TotalSeconds:0} s before, {s.During.TotalSeconds:0} s under attack ({s.AttackRate}/s where the attacker paces itself), {s.After.TotalSeconds:0} s after");
                var preparing = Task.Run(() => attack.PrepareAsync(target, ct), CancellationToken.None);
                await Task.Delay(s.Warmup, ct).ConfigureAwait(false);
                await preparing.ConfigureAwait(false);
                var watched = attack.Watched is { } w ? processes.Get(w) : null;
                var secondsFigures = await MeasureAsync(s, attack, target, timeline, seconds, watched, output, ct).ConfigureAwait(false);
                await stopLoad.CancelAsync().ConfigureAwait(false);
                await Task.WhenAll(loading).ConfigureAwait(false);
                await DrainAsync(timeline, loads, ct).ConfigureAwait(false);
                var counts = await attack.CountermeasureAsync(target, ct).ConfigureAwait(false);
                if (loads.Sum(l => l.Refusals) is > 0 and var refusals)
                {
                    output.WriteLine($"the SDK refused {refusals} sends: the deployment did not answer for its UnavailableAfter (offered again after a pause)");
                }
                if (loads.Any(l => timeline.NextIndex(l.Sender) < l.Sent) || timeline.Violations > 0)
                {
                    await DescribeAsync(config, output, ct).ConfigureAwait(false);
                }
                var beforeEnd = (int)s.Before.TotalSeconds;
                var duringEnd = (int)(s.Before + s.During).TotalSeconds;
                return new AttackFigures(s, attack.Description, attack.Countermeasure, secondsFigures,
                    loads.ToDictionary(l => l.Sender, l => (l.Sent, (long)timeline.NextIndex(l.Sender))),
                    timeline.Violations, timeline.FirstViolations, attack.Applied, timeline.OtherSendersDelivered, counts,
                    timeline.Window(0, beforeEnd), timeline.Window(beforeEnd, duringEnd), timeline.Window(duringEnd, seconds), attack.Watched);
            }
            finally
            {
                await LoadRunTeardown.StopAsync(senders, stopReading, reading, processes).ConfigureAwait(false);
            }
        }
        finally
        {
            if (s.Keep)
            {
                output.WriteLine($"kept {dir}");
            }
            else
            {
                TryDelete(dir);
            }
        }
    }

    /// <summary>The measured run: starts the attack at the end of the before phase, stops it after its window, prints each second once it is over.</summary>
    private static async Task<IReadOnlyList<SecondFigures>> MeasureAsync(AttackSettings s, Attack attack, AttackTarget target, DeliveryTimeline timeline,
        int seconds, Process? watched, TextWriter output, CancellationToken ct)
    {
        var start = Stopwatch.GetTimestamp();
        timeline.Start(start);
        using var stopAttack = CancellationTokenSource.CreateLinkedTokenSource(ct);
        Task? attacking = null;
        var figures = new List<SecondFigures>(seconds);
        var appliedBefore = 0L;
        output.WriteLine("second  legit msg/s   p50 ms   p99 ms  attack/s" + (watched is null ? "" : $"  {attack.Watched} RSS MiB"));
        try
        {
            for (var second = 0; second < seconds; second++)
            {
                if (second == (int)s.Before.TotalSeconds)
                {
                    attacking = Task.Run(() => attack.RunAsync(target, stopAttack.Token), CancellationToken.None);
                }
                if (second == (int)(s.Before + s.During).TotalSeconds && attacking is not null)
                {
                    await stopAttack.CancelAsync().ConfigureAwait(false);
                    await attacking.ConfigureAwait(false);
                }
                var due = start + (second + 1) * Stopwatch.Frequency;
                var wait = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), due);
                if (wait > TimeSpan.Zero)
                {
                    await Task.Delay(wait, ct).ConfigureAwait(false);
                }
                var applied = attack.Applied;
                var f = timeline.Second(second, applied - appliedBefore) with { RssMiB = watched is null ? null : ProcessMemory.RssMiB(watched) };
                appliedBefore = applied;
                figures.Add(f);
                var phase = second < s.Before.TotalSeconds ? ' ' : second < (s.Before + s.During).TotalSeconds ? '*' : ' ';
                output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{f.Second,5}{phase} {f.Delivered,11} {f.P50Ms,8:0.0} {f.P99Ms,8:0.0} {f.AttackActions,9}{(f.RssMiB is { } rss ? $" {rss,18:0.0}" : "")}"));
            }
        }
        finally
        {
            if (attacking is not null && !stopAttack.IsCancellationRequested)
            {
                await stopAttack.CancelAsync().ConfigureAwait(false);
                await attacking.ConfigureAwait(false);
            }
        }
        return figures;
    }

    /// <summary>Waits until every legitimate message accepted was delivered, or nothing arrived for <see cref="DrainBound"/>.</summary>
    private static async Task DrainAsync(DeliveryTimeline timeline, IReadOnlyList<LegitimateLoad> loads, CancellationToken ct)
    {
        var lastProgress = Stopwatch.GetTimestamp();
        var seen = -1L;
        while (loads.Any(l => timeline.NextIndex(l.Sender) < l.Sent) && Stopwatch.GetElapsedTime(lastProgress) < DrainBound)
        {
            var now = timeline.LegitimateDelivered;
            if (now != seen)
            {
                seen = now;
                lastProgress = Stopwatch.GetTimestamp();
            }
            await Task.Delay(TimeSpan.FromMilliseconds(200), ct).ConfigureAwait(false);
        }
    }

    /// <summary>Every component's health and non-zero counters: what a run that lost messages needs to be understood.</summary>
    private static async Task DescribeAsync(DeploymentConfig config, TextWriter output, CancellationToken ct)
    {
        var all = await DeploymentHealth.ProbeAllAsync(config with { Agents = [] }, TimeSpan.FromSeconds(5), ct).ConfigureAwait(false);
        foreach (var h in all)
        {
            output.WriteLine($"{h.Name} healthy={h.Healthy} {h.Detail}: " + string.Join(" ",
                h.Counters.Where(kv => kv.Value != 0).OrderBy(kv => kv.Key, StringComparer.Ordinal).Select(kv => string.Create(CultureInfo.InvariantCulture, $"{kv.Key}={kv.Value}"))));
        }
    }

    private static ProcessStartInfo Command(IReadOnlyList<string> args)
    {
        var psi = new ProcessStartInfo("dotnet") { UseShellExecute = false };
        psi.ArgumentList.Add(args.Count > 0 && args[0] is CompromisedPreSqProcess.Command or CompromisedReplicaSqProcess.Command ? typeof(AttackRun).Assembly.Location : SieveqDll);
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        return psi;
    }

    private static void TryDelete(string dir)
    {
        try
        {
            Directory.Delete(dir, recursive: true);
        }
        catch (IOException)
        {
            // a component still flushing; the temp folder is the OS's to clean
        }
        catch (UnauthorizedAccessException)
        {
            // likewise
        }
    }
}
