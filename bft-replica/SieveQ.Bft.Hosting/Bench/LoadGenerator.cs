using System.Diagnostics;
using SieveQ.Bft.Hosting.Client;

namespace SieveQ.Bft.Hosting.Bench;

public sealed record LoadOptions
{
    public int OutstandingPerClient { get; init; } = 64;
    public int PayloadBytes { get; init; } = 1024;
    public TimeSpan Warmup { get; init; } = TimeSpan.FromSeconds(2);
    public TimeSpan Duration { get; init; } = TimeSpan.FromSeconds(10);
    /// <summary>Open-loop pacing (total requests/s over all clients); null saturates with the outstanding window.</summary>
    public double? RatePerSecond { get; init; }
}

public sealed record LoadResult(long Completed, double Seconds, double RequestsPerSecond, LatencySummary Latency, long Retransmissions, long Failed);

public readonly record struct LiveSample(double Seconds, double RequestsPerSecond, LatencySummary Latency);

/// <summary>
/// Drives clients either closed-loop (each keeps a fixed number of requests outstanding, as BFT-SMaRt's
/// microbenchmark does with one) or open-loop at a fixed rate; measures only after the warm-up.
/// </summary>
public static class LoadGenerator
{
    public static async Task<LoadResult> RunAsync(IReadOnlyList<BftClient> clients, LoadOptions options, Action<LiveSample>? live, CancellationToken ct)
    {
        var payload = new byte[options.PayloadBytes];
        Random.Shared.NextBytes(payload);
        var latency = new LatencyRecorder();
        var liveLatency = new LatencyRecorder();
        long completed = 0, failed = 0, liveCompleted = 0;
        var measuring = 0;
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(ct);
        var clock = Stopwatch.StartNew();

        async Task OneAsync(BftClient client)
        {
            var t0 = Stopwatch.GetTimestamp();
            try
            {
                await client.SubmitAsync(payload, stop.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                return;
            }
            catch (ObjectDisposedException)
            {
                return;
            }
            catch (InvalidOperationException)
            {
                Interlocked.Increment(ref failed);
                return;
            }
            var us = Stopwatch.GetElapsedTime(t0).TotalMicroseconds;
            Interlocked.Increment(ref liveCompleted);
            liveLatency.Record(us);
            if (Volatile.Read(ref measuring) == 1)
            {
                Interlocked.Increment(ref completed);
                latency.Record(us);
            }
        }

        var workers = new List<Task>();
        if (options.RatePerSecond is { } rate)
        {
            var perClient = rate / clients.Count;
            foreach (var c in clients)
            {
                workers.Add(Task.Run(async () =>
                {
                    var interval = TimeSpan.FromSeconds(1 / perClient);
                    var next = Stopwatch.GetTimestamp();
                    var inflight = new List<Task>();
                    while (!stop.IsCancellationRequested)
                    {
                        inflight.Add(OneAsync(c));
                        inflight.RemoveAll(t => t.IsCompleted);
                        next += (long)(interval.TotalSeconds * Stopwatch.Frequency);
                        var wait = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), next);
                        if (wait > TimeSpan.Zero)
                        {
                            try
                            {
                                await Task.Delay(wait, stop.Token).ConfigureAwait(false);
                            }
                            catch (OperationCanceledException)
                            {
                                break;
                            }
                        }
                    }
                    await Task.WhenAll(inflight).ConfigureAwait(false);
                }, CancellationToken.None));
            }
        }
        else
        {
            foreach (var c in clients)
            {
                for (var i = 0; i < options.OutstandingPerClient; i++)
                {
                    workers.Add(Task.Run(async () =>
                    {
                        while (!stop.IsCancellationRequested)
                        {
                            await OneAsync(c).ConfigureAwait(false);
                        }
                    }, CancellationToken.None));
                }
            }
        }

        var total = options.Warmup + options.Duration;
        var lastLive = clock.Elapsed;
        double measuredSeconds = 0;
        var measureStart = TimeSpan.Zero;
        try
        {
            while (clock.Elapsed < total)
            {
                await Task.Delay(TimeSpan.FromMilliseconds(250), ct).ConfigureAwait(false);
                if (Volatile.Read(ref measuring) == 0 && clock.Elapsed >= options.Warmup)
                {
                    measureStart = clock.Elapsed;
                    Volatile.Write(ref measuring, 1);
                }
                if (live is not null && clock.Elapsed - lastLive >= TimeSpan.FromSeconds(1))
                {
                    var span = (clock.Elapsed - lastLive).TotalSeconds;
                    lastLive = clock.Elapsed;
                    live(new LiveSample(clock.Elapsed.TotalSeconds, Interlocked.Exchange(ref liveCompleted, 0) / span, liveLatency.Summarize(reset: true)));
                }
            }
        }
        finally
        {
            Volatile.Write(ref measuring, 0);
            measuredSeconds = (clock.Elapsed - measureStart).TotalSeconds;
            await stop.CancelAsync().ConfigureAwait(false);
            await Task.WhenAll(workers).ConfigureAwait(false);
        }
        var retransmissions = clients.Sum(c => c.Retransmissions);
        return new LoadResult(completed, measuredSeconds, completed / Math.Max(0.001, measuredSeconds), latency.Summarize(), retransmissions, failed);
    }

    /// <summary>Runs until cancelled, reporting a live sample every second (the cluster demo).</summary>
    public static Task RunForeverAsync(IReadOnlyList<BftClient> clients, LoadOptions options, Action<LiveSample> live, CancellationToken ct) =>
        RunAsync(clients, options with { Warmup = TimeSpan.Zero, Duration = TimeSpan.FromDays(365) }, live, ct)
            .ContinueWith(static _ => { }, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
}
