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

/// <summary>
/// One attack run: a fresh local deployment as `sieveq up` makes it (4 replica-SQs, 2 pre-SQs, each its own
/// process, every check on; the attacks may replace one pre-SQ and one replica-SQ by their compromised twins, which
/// misbehave only during their attack's window), the legitimate senders and the receiver on the in-process SDK, a
/// warm-up, then the measured run: quiet, each attack in its own window with quiet between two, quiet after the
/// last, a line per second. Afterwards it waits until every accepted legitimate message arrived (or a bound passed);
/// each attack's countermeasure counts are what the components counted from just before its window to the end of
/// the quiet time after it.
/// </summary>
internal static class AttackRun
{
    private static readonly TimeSpan DrainBound = TimeSpan.FromSeconds(90);

    public static string SieveqDll =>
        typeof(AttackRun).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "SieveqDll").Value!;

    public static async Task<AttackFigures> RunAsync(AttackPlan plan, TextWriter output, CancellationToken ct)
    {
        if (!File.Exists(SieveqDll))
        {
            throw new DeploymentException($"build the CLI first (dotnet build service/SieveQ.Cli -c Release): {SieveqDll} is missing");
        }
        var s = plan.Settings;
        var shape = plan.Shape;
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
        for (var i = 0; i < plan.Attacks.Count; i++)
        {
            var prefix = plan.Attacks.Count == 1 ? "" : string.Create(CultureInfo.InvariantCulture, $" {i + 1}, seconds {s.WindowStart(i).TotalSeconds:0}-{s.WindowEnd(i).TotalSeconds:0}");
            output.WriteLine($"attack{prefix}       {AttackKinds.Name(s.Kinds[i])}: {plan.Attacks[i].Description}");
            output.WriteLine($"countermeasure {plan.Attacks[i].Countermeasure}");
        }
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
                    + $"{s.Before.TotalSeconds:0} s before, {s.During.TotalSeconds:0} s under each attack ({s.AttackRate}/s where the attacker paces itself)"
                    + (plan.Attacks.Count > 1 ? $" with {s.Before.TotalSeconds:0} s between two" : "") + $", {s.After.TotalSeconds:0} s after");
                var preparing = plan.Attacks.Select(a => Task.Run(() => a.PrepareAsync(target, ct), CancellationToken.None)).ToList();
                await Task.Delay(s.Warmup, ct).ConfigureAwait(false);
                await Task.WhenAll(preparing).ConfigureAwait(false);
                var watched = new Dictionary<string, Process>(StringComparer.Ordinal);
                foreach (var w in plan.Attacks.Select(a => a.Watched).OfType<string>())
                {
                    if (processes.Get(w) is { } process)
                    {
                        watched.TryAdd(w, process);
                    }
                }
                var (secondsFigures, counts) = await MeasureAsync(plan, target, timeline, seconds, watched, output, ct).ConfigureAwait(false);
                await stopLoad.CancelAsync().ConfigureAwait(false);
                await Task.WhenAll(loading).ConfigureAwait(false);
                await DrainAsync(timeline, loads, ct).ConfigureAwait(false);
                var last = plan.Attacks[^1];
                counts[^1] = Difference(last, counts[^1], await last.CountermeasureAsync(target, ct).ConfigureAwait(false));
                if (loads.Sum(l => l.Refusals) is > 0 and var refusals)
                {
                    output.WriteLine($"the SDK refused {refusals} sends: the deployment did not answer for its UnavailableAfter (offered again after a pause)");
                }
                if (loads.Any(l => timeline.NextIndex(l.Sender) < l.Sent) || timeline.Violations > 0)
                {
                    await DescribeAsync(config, output, ct).ConfigureAwait(false);
                }
                var attacks = plan.Attacks.Select((a, i) =>
                {
                    var (from, to) = ((int)s.WindowStart(i).TotalSeconds, (int)s.WindowEnd(i).TotalSeconds);
                    var (beforeFrom, afterTo) = (from - (int)s.Before.TotalSeconds, to + (int)s.QuietAfter(i).TotalSeconds);
                    return new AttackWindowFigures(s.Kinds[i], a.Description, a.Countermeasure, beforeFrom, from, to, afterTo, a.Applied, counts[i],
                        timeline.Window(beforeFrom, from), timeline.Window(from, to), timeline.Window(to, afterTo), a.Watched);
                }).ToList();
                return new AttackFigures(s, secondsFigures, loads.ToDictionary(l => l.Sender, l => (l.Sent, (long)timeline.NextIndex(l.Sender))),
                    timeline.Violations, timeline.FirstViolations, timeline.OtherSendersDelivered, attacks);
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

    /// <summary>
    /// The measured run: starts each attack at its window's start and stops it at the window's end, prints each second
    /// once it is over. A second before each window it reads that attack's countermeasure counts (the baseline) and the
    /// previous attack's (its end); returns each attack's counts over its windows, the last one's still as its baseline
    /// (the caller reads its end once the run drained).
    /// </summary>
    private static async Task<(IReadOnlyList<SecondFigures> Seconds, IReadOnlyDictionary<string, long>[] Counts)> MeasureAsync(AttackPlan plan,
        AttackTarget target, DeliveryTimeline timeline, int seconds, IReadOnlyDictionary<string, Process> watched, TextWriter output, CancellationToken ct)
    {
        var s = plan.Settings;
        var attacks = plan.Attacks;
        var from = attacks.Select((_, i) => (int)s.WindowStart(i).TotalSeconds).ToArray();
        var to = attacks.Select((_, i) => (int)s.WindowEnd(i).TotalSeconds).ToArray();
        var baselines = new Task<IReadOnlyDictionary<string, long>>?[attacks.Count];
        var ends = new Task<IReadOnlyDictionary<string, long>>?[attacks.Count];
        var stops = attacks.Select(_ => CancellationTokenSource.CreateLinkedTokenSource(ct)).ToArray();
        var running = new Task?[attacks.Count];
        var appliedBefore = new long[attacks.Count];
        var start = Stopwatch.GetTimestamp();
        timeline.Start(start);
        var figures = new List<SecondFigures>(seconds);
        output.WriteLine("second  legit msg/s   p50 ms   p99 ms  attack/s" + string.Concat(watched.Keys.Select(w => $"  {w} RSS MiB")));
        try
        {
            for (var second = 0; second < seconds; second++)
            {
                for (var i = 0; i < attacks.Count; i++)
                {
                    if (second == from[i] - 1)
                    {
                        if (i > 0)
                        {
                            var previous = attacks[i - 1];
                            ends[i - 1] = Task.Run(() => previous.CountermeasureAsync(target, ct), CancellationToken.None);
                        }
                        var attack = attacks[i];
                        baselines[i] = Task.Run(() => attack.CountermeasureAsync(target, ct), CancellationToken.None);
                    }
                    if (second == from[i])
                    {
                        await baselines[i]!.ConfigureAwait(false);
                        var (attack, stop) = (attacks[i], stops[i].Token);
                        running[i] = Task.Run(() => attack.RunAsync(target, stop), CancellationToken.None);
                        if (attacks.Count > 1)
                        {
                            output.WriteLine($"-- {AttackKinds.Name(s.Kinds[i])} on");
                        }
                    }
                    if (second == to[i] && running[i] is { } r)
                    {
                        await stops[i].CancelAsync().ConfigureAwait(false);
                        await r.ConfigureAwait(false);
                        if (attacks.Count > 1)
                        {
                            output.WriteLine($"-- {AttackKinds.Name(s.Kinds[i])} off");
                        }
                    }
                }
                var due = start + (second + 1) * Stopwatch.Frequency;
                var wait = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), due);
                if (wait > TimeSpan.Zero)
                {
                    await Task.Delay(wait, ct).ConfigureAwait(false);
                }
                var actions = 0L;
                for (var i = 0; i < attacks.Count; i++)
                {
                    var applied = attacks[i].Applied;
                    actions += applied - appliedBefore[i];
                    appliedBefore[i] = applied;
                }
                var rss = new Dictionary<string, double>(StringComparer.Ordinal);
                foreach (var (name, process) in watched)
                {
                    if (ProcessMemory.RssMiB(process) is { } mib)
                    {
                        rss[name] = mib;
                    }
                }
                var f = timeline.Second(second, actions) with { RssMiB = watched.Count == 0 ? null : rss };
                figures.Add(f);
                var phase = Enumerable.Range(0, attacks.Count).Any(i => second >= from[i] && second < to[i]) ? '*' : ' ';
                output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"{f.Second,5}{phase} {f.Delivered,11} {f.P50Ms,8:0.0} {f.P99Ms,8:0.0} {f.AttackActions,9}{string.Concat(watched.Keys.Select(w => rss.TryGetValue(w, out var m) ? $" {m,18:0.0}" : $" {"-",18}"))}"));
            }
        }
        finally
        {
            for (var i = 0; i < attacks.Count; i++)
            {
                if (running[i] is { } r && !stops[i].IsCancellationRequested)
                {
                    await stops[i].CancelAsync().ConfigureAwait(false);
                    await r.ConfigureAwait(false);
                }
                stops[i].Dispose();
            }
        }
        var counts = new IReadOnlyDictionary<string, long>[attacks.Count];
        for (var i = 0; i < attacks.Count; i++)
        {
            var baseline = await baselines[i]!.ConfigureAwait(false);
            counts[i] = ends[i] is { } end ? Difference(attacks[i], baseline, await end.ConfigureAwait(false)) : baseline;
        }
        return (figures, counts);
    }

    /// <summary>What the countermeasure counted between two readings; levels (<see cref="Attack.Levels"/>) as last read.</summary>
    private static Dictionary<string, long> Difference(Attack attack, IReadOnlyDictionary<string, long>? start, IReadOnlyDictionary<string, long> end)
    {
        var difference = new Dictionary<string, long>(StringComparer.Ordinal);
        foreach (var (name, value) in end)
        {
            difference[name] = attack.Levels.Contains(name) || start is null ? value : value - start.GetValueOrDefault(name);
        }
        return difference;
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
