using System.Diagnostics;
using SieveQ.Agent.Hosting;
using SieveQ.Cli.Commands;
using SieveQ.Sieve.Diagnostics;
using SieveQ.Deployment;
using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Sender;
using SieveQ.Sieve.Hosting.Diagnostics;

namespace SieveQ.Cli.Bench;

/// <summary>
/// The SieveQ side of `bench e2e`: a fresh local deployment (each replica-SQ and pre-SQ its own
/// process, every check on), every enrolled sender on the in-process SDK splitting the offered rate,
/// and one receiver reading and committing as an application would.
/// </summary>
internal static class E2eSieveRun
{
    private const int Receiver = 100;

    /// <param name="ruleSet">
    /// A rule set (JSON) the replicas enforce: the deployment is created with it, signed by a fresh
    /// administrator key, and the run checks afterwards that f+1 replicas report it running. Null:
    /// fixed routes.
    /// </param>
    /// <param name="during">Runs beside the measured load, from its start, given the deployment and its folder (e.g. rule-set switches).</param>
    /// <param name="duringWarmup">Runs beside the warm-up load, from its start (e.g. a first rule-set switch each way).</param>
    /// <param name="phases">Counts deliveries by the phase they were sent in; the run then waits for the last ones to arrive.</param>
    /// <param name="launched">Given the component processes once they are healthy (a recovery round restarts them).</param>
    public static async Task<E2eFigures> RunAsync(E2eSettings s, string name, byte[]? ruleSet, CancellationToken ct,
        Func<DeploymentConfig, string, CancellationToken, Task>? during = null, MeasuredPhases? phases = null,
        Func<DeploymentConfig, string, CancellationToken, Task>? duringWarmup = null, Action<ComponentProcesses, LaunchOptions>? launched = null)
    {
        var dir = Path.Combine(Path.GetTempPath(), $"sieveq-bench-e2e-{Environment.ProcessId}-{Guid.NewGuid():N}"[..48]);
        var spec = new LocalDeploymentSpec
        {
            BasePort = PortPlan.FindFreeBase(4, 2),
            Durability = s.Durability,
            Receivers = [Receiver],
            RuleSet = ruleSet,
            Tls = !s.Cleartext,
        };
        var cfg = DeploymentBootstrap.Create(dir, spec);
        Console.WriteLine($"deployment   {dir} ({(s.Cleartext ? "cleartext HTTP/2" : "TLS 1.3, pinned keys")} on every gRPC link)");
        try
        {
            await using var processes = new ComponentProcesses(a => ClusterProcesses.SelfCommand(a), Path.Combine(dir, "logs"));
            processes.Exited += (name, code) => Console.Error.WriteLine($"!! {name} exited with code {code} (see {processes.LogPath(name)})");
            var launch = new LaunchOptions { StartAgents = false, LogLevel = s.LogLevel };
            await LocalDeploymentLauncher.LaunchAsync(cfg, processes, launch, ct).ConfigureAwait(false);
            launched?.Invoke(processes, launch);
            var clients = DeploymentContext.Load(dir).ToClientConfiguration();
            var state = Path.Combine(dir, "bench-state");
            var meter = new DeliveryMeter { Phases = phases };
            using var stopReading = CancellationTokenSource.CreateLinkedTokenSource(ct);
            await using var receiver = SieveQReceiver.Create(clients, Receiver, Path.Combine(state, "receiver"),
                new SieveQReceiverOptions { AutoCommitEvery = 512, AutoCommitAfter = TimeSpan.FromMilliseconds(50) });
            var reading = Task.Run(async () =>
            {
                await foreach (var m in receiver.ReadAllAsync(stopReading.Token).ConfigureAwait(false))
                {
                    meter.Record(m.Data.Span);
                }
            }, CancellationToken.None);
            // The load generator awaits each SendAsync in turn, so with the durable outbox every message waits for its
            // own fsync and the run measures the disk as much as the sieve: off unless --outbox (sdk/README.md).
            var senderOptions = new SieveQSenderOptions { Outbox = new SenderOutboxOptions { Enabled = s.SenderOutbox } };
            Console.WriteLine(s.SenderOutbox
                ? "senders      in-process SDK with the durable outbox (each awaited send waits for its fsync)"
                : "senders      in-process SDK, durable outbox off (--outbox to measure with it)");
            var senders = spec.Senders.Select(id => SieveQSender.Create(clients, id, Path.Combine(state, "senders"), senderOptions)).ToList();
            long RootsSigned() => senders.Sum(x => x.Stats.RootsSigned);
            try
            {
                int? perSender = s.Rate is { } r ? Math.Max(1, r / senders.Count) : null;
                async Task<long> OfferAsync(TimeSpan length, CancellationToken offerCt)
                {
                    var counts = await Task.WhenAll(senders.Select(sender => Task.Run(() => PacedSender.RunAsync(
                        async (m, c) => await sender.SendAsync(Receiver, m, c).ConfigureAwait(false), s.Size, perSender, length, offerCt), offerCt))).ConfigureAwait(false);
                    return counts.Sum();
                }
                var warming = OfferAsync(s.Warmup, ct);
                long warmupSent;
                try
                {
                    if (duringWarmup is not null)
                    {
                        await duringWarmup(cfg, dir, ct).ConfigureAwait(false);
                    }
                }
                finally
                {
                    // Not left running behind a failed primer: the senders are disposed below.
                    warmupSent = await warming.ConfigureAwait(false);
                }
                var measuredFrom = Stopwatch.GetTimestamp();
                var rootsBefore = RootsSigned();
                var cpu = CpuAccount.Start(processes);
                meter.Open(measuredFrom, s.Duration);
                using var stopOffering = CancellationTokenSource.CreateLinkedTokenSource(ct);
                var offering = OfferAsync(s.Duration, stopOffering.Token);
                if (during is not null)
                {
                    try
                    {
                        await during(cfg, dir, ct).ConfigureAwait(false);
                    }
                    catch
                    {
                        await stopOffering.CancelAsync().ConfigureAwait(false);
                        await offering.ConfigureAwait(false);
                        throw;
                    }
                }
                var sent = await offering.ConfigureAwait(false);
                var measuredTo = Stopwatch.GetTimestamp();
                var cpuUsed = cpu.Stop();
                var roots = RootsSigned() - rootsBefore;
                if (phases is not null)
                {
                    await DrainAsync(meter, ct).ConfigureAwait(false);
                }
                var figures = meter.Figures(name, s.Duration.TotalSeconds, sent) with { SenderRootsSigned = roots };
                if (phases is not null)
                {
                    // After the drain: everything offered, warm-up included, against everything the receiver read.
                    figures = figures with { SentInAll = warmupSent + sent, ReceivedInAll = meter.Total };
                }
                figures = figures with { Cpu = CpuAccount.PerMessage(cpuUsed, figures.Delivered) };
                if (StageTrace.Enabled)
                {
                    // Let the last sampled messages arrive and every process write its marks (each does so twice a second).
                    await Task.Delay(TimeSpan.FromSeconds(2), ct).ConfigureAwait(false);
                    StageTrace.Flush();
                    figures = figures with { Profile = E2eStageReport.Read(cfg.F, measuredFrom, measuredTo) };
                }
                if (ruleSet is not null)
                {
                    await ReportRulesAsync(cfg, ct).ConfigureAwait(false);
                }
                return figures;
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
                Console.WriteLine($"kept {dir}");
            }
            else
            {
                TryDelete(dir);
            }
        }
    }

    /// <summary>Waits until deliveries stop (none for a second), at most 15 s: messages sent late in the last phase still count.</summary>
    private static async Task DrainAsync(DeliveryMeter meter, CancellationToken ct)
    {
        var deadline = Stopwatch.GetTimestamp() + 15 * Stopwatch.Frequency;
        var seen = -1L;
        while (meter.Total != seen && Stopwatch.GetTimestamp() < deadline)
        {
            seen = meter.Total;
            await Task.Delay(TimeSpan.FromSeconds(1), ct).ConfigureAwait(false);
        }
    }

    /// <summary>Shows that the rules really ran: the version f+1 replicas report and what replica 0 denied, by rule.</summary>
    private static async Task ReportRulesAsync(DeploymentConfig cfg, CancellationToken ct)
    {
        var state = await RuleSetPublisher.ReadStateAsync(cfg, ct).ConfigureAwait(false);
        var r0 = cfg.Replicas[0];
        var health = await DeploymentHealth.ProbeAsync("replica-sq", r0.Name, r0.ApiUrl, Protocol.ProtocolNames.ReplicaSqService, TimeSpan.FromSeconds(3), ct, r0.Pin()).ConfigureAwait(false);
        var denials = health.Counters.Where(kv => kv.Key.StartsWith("deny.rule.", StringComparison.Ordinal)).Select(kv => $"{kv.Key[10..]}={kv.Value}").ToList();
        Console.WriteLine($"rules        version {state.ActiveVersion} running on f+1 replica-SQs; {r0.Name} processed {health.Counters.GetValueOrDefault("processed")}, "
            + $"denied by rule: {(denials.Count == 0 ? "none" : string.Join(", ", denials))}");
    }

    private static void TryDelete(string dir)
    {
        try
        {
            Directory.Delete(dir, recursive: true);
        }
        catch (IOException e)
        {
            Console.Error.WriteLine($"could not delete {dir}: {e.Message}");
        }
    }
}
