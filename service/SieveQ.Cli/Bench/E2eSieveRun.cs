using System.Diagnostics;
using SieveQ.Cli.Commands;
using SieveQ.Deployment;
using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Sender;

namespace SieveQ.Cli.Bench;

/// <summary>
/// The SieveQ side of `bench e2e`: a fresh local deployment (each replica-SQ and pre-SQ its own
/// process, every check on), every enrolled sender on the in-process SDK splitting the offered rate,
/// and one receiver reading and committing as an application would.
/// </summary>
internal static class E2eSieveRun
{
    private const int Receiver = 100;

    public static async Task<E2eFigures> RunAsync(E2eSettings s, CancellationToken ct)
    {
        var dir = Path.Combine(Path.GetTempPath(), $"sieveq-bench-e2e-{Environment.ProcessId}-{Guid.NewGuid():N}"[..48]);
        var spec = new LocalDeploymentSpec
        {
            BasePort = PortPlan.FindFreeBase(4, 2),
            Durability = s.Durability,
            Receivers = [Receiver],
        };
        var cfg = DeploymentBootstrap.Create(dir, spec);
        Console.WriteLine($"deployment   {dir}");
        try
        {
            await using var processes = new ComponentProcesses(a => ClusterProcesses.SelfCommand(a), Path.Combine(dir, "logs"));
            processes.Exited += (name, code) => Console.Error.WriteLine($"!! {name} exited with code {code} (see {processes.LogPath(name)})");
            await LocalDeploymentLauncher.LaunchAsync(cfg, processes, new LaunchOptions { StartAgents = false, LogLevel = s.LogLevel }, ct).ConfigureAwait(false);
            var ctx = DeploymentContext.Load(dir);
            var state = Path.Combine(dir, "bench-state");
            var meter = new DeliveryMeter();
            using var stopReading = CancellationTokenSource.CreateLinkedTokenSource(ct);
            await using var receiver = SieveQReceiver.Create(ctx, Receiver, Path.Combine(state, "receiver"),
                new SieveQReceiverOptions { AutoCommitEvery = 512, AutoCommitAfter = TimeSpan.FromMilliseconds(50) });
            var reading = Task.Run(async () =>
            {
                await foreach (var m in receiver.ReadAllAsync(stopReading.Token).ConfigureAwait(false))
                {
                    meter.Record(m.Data.Span);
                }
            }, CancellationToken.None);
            var senders = spec.Senders.Select(id => SieveQSender.Create(ctx, id, Path.Combine(state, "senders"))).ToList();
            try
            {
                int? perSender = s.Rate is { } r ? Math.Max(1, r / senders.Count) : null;
                async Task<long> OfferAsync(TimeSpan length)
                {
                    var counts = await Task.WhenAll(senders.Select(sender => Task.Run(() => PacedSender.RunAsync(
                        async (m, c) => await sender.SendAsync(Receiver, m, c).ConfigureAwait(false), s.Size, perSender, length, ct), ct))).ConfigureAwait(false);
                    return counts.Sum();
                }
                await OfferAsync(s.Warmup).ConfigureAwait(false);
                meter.Open(Stopwatch.GetTimestamp(), s.Duration);
                var sent = await OfferAsync(s.Duration).ConfigureAwait(false);
                return meter.Figures("sieveq", s.Duration.TotalSeconds, sent);
            }
            finally
            {
                foreach (var sender in senders)
                {
                    await sender.DisposeAsync().ConfigureAwait(false);
                }
                await stopReading.CancelAsync().ConfigureAwait(false);
                try
                {
                    await reading.ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    // stopped reading
                }
                await processes.StopAllAsync(TimeSpan.FromSeconds(10)).ConfigureAwait(false);
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
