using SieveQ.Policy.Hosting;
using System.Buffers.Binary;
using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using Google.Protobuf;
using Microsoft.Extensions.Logging;
using SieveQ.Agent.Hosting;
using SieveQ.Cli.Running;
using SieveQ.Deployment;
using SieveQ.Firewall.Enforcement;
using SieveQ.Policy;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq agent` (the local endpoint for applications) and `sieveq demo send|receive`, the demo
/// applications `sieveq up` runs as separate processes against the agent's Unix socket. Demo payloads
/// start with the send time (8 bytes, big-endian Unix microseconds) so the receiver measures latency.
/// </summary>
internal static class AgentCommands
{
    public static Command Build()
    {
        var deployment = DeploymentOption.Required("Deployment directory (deployment.json, keys, enrolment).");
        var name = new Option<string>("--name") { Description = "The agent entry of the deployment to run.", DefaultValueFactory = _ => "agent" };
        var state = new Option<DirectoryInfo?>("--state") { Description = "State directory (sequence marks, delivery cursors); default: the deployment's data directory." };
        var logLevel = new Option<LogLevel>("--log-level") { Description = "Minimum log level (logs go to stderr).", DefaultValueFactory = _ => LogLevel.Information };
        var firewall = new Option<bool>("--firewall") { Description = "Run layer 0: push the agent policy to the driver (libsieveqfw.so off Windows), attest new identities, QGuard levels." };
        var policyFile = new Option<string?>("--policy") { Description = "Agent policy JSON mirror (default with --firewall: the registry on Windows, else the standard mirror path); its rule-set location is followed and new versions published to the replicas." };
        var cmd = new Command("agent", "Run the agent: sender-SQ and post-SQ for local applications on a Unix socket (SIGTERM or Ctrl-C stops it).") { deployment, name, state, logLevel, firewall, policyFile };
        var telemetry = TelemetryArguments.AddTo(cmd);
        cmd.SetAction(async (ParseResult parse, CancellationToken ct) =>
        {
            using var stop = new StopSignal(ct);
            var arguments = new AgentArguments(parse.GetValue(deployment)!.FullName, parse.GetValue(name)!, parse.GetValue(state)?.FullName,
                parse.GetValue(firewall), parse.GetValue(policyFile));
            return await ComponentHost.RunAsync($"agent '{arguments.Name}'", parse.GetValue(logLevel), arguments,
                telemetry.Read(parse, "agent", $"agent {arguments.Name}"), Validate, StartAsync, stop.Token).ConfigureAwait(false);
        });
        return cmd;
    }

    /// <summary>What `agent` parsed: validated when its host starts.</summary>
    private sealed record AgentArguments(string Directory, string Name, string? StateDirectory, bool Firewall, string? PolicyFile);

    private static string? Validate(AgentArguments a) =>
        string.IsNullOrWhiteSpace(a.Name) ? "--name must not be empty"
        : a.PolicyFile is { } f && !File.Exists(f) ? $"no policy file {f}"
        : null;

    private static async Task<RunningComponent> StartAsync(AgentArguments a, ILoggerFactory logs, CancellationToken ct)
    {
        DeploymentContext ctx;
        try
        {
            ctx = DeploymentContext.Load(a.Directory);
            _ = ctx.Config.Agent(a.Name);
        }
        catch (DeploymentException e)
        {
            throw new ComponentStartException($"agent '{a.Name}': {e.Message}", e);
        }
        // The policy is read with --firewall (what it enforces) or --policy (its rule-set location is followed too).
        var source = a.Firewall || a.PolicyFile is not null ? PolicyCommands.OpenSource(a.PolicyFile) : null;
        var policy = source is null ? null : new PolicyMonitor(source, logs.CreateLogger<PolicyMonitor>());
        AgentHost host;
        try
        {
            policy?.Start();
            var options = new AgentHostOptions { Firewall = a.Firewall ? new FirewallOptions() : null, Policy = policy };
            host = await AgentHost.StartAsync(ctx, a.Name, a.StateDirectory, logs, options, ct).ConfigureAwait(false);
        }
        catch
        {
            policy?.Dispose();
            source?.Dispose();
            throw;
        }
        await Console.Out.WriteLineAsync($"agent '{host.Entry.Name}' listening on {host.Endpoint}").ConfigureAwait(false);
        // The agent's web host also stops by itself on its own console signals; that ends the run cleanly.
        return new RunningComponent(host.WaitForShutdownAsync(), $"agent '{a.Name}'", StatusJson: null, async () =>
        {
            await host.DisposeAsync().ConfigureAwait(false);
            policy?.Dispose();
            source?.Dispose();
        });
    }

    public static Command BuildDemo()
    {
        var demo = new Command("demo", "Demo applications that use an agent over its Unix socket.");
        demo.Subcommands.Add(DemoSend.Build());
        demo.Subcommands.Add(DemoReceive.Build());
        return demo;
    }

    private static long NowMicros() => (DateTime.UtcNow - DateTime.UnixEpoch).Ticks / 10;

    private static async Task<int> RunUntilCancelledAsync(Func<CancellationToken, Task<int>> body, CancellationToken ct)
    {
        try
        {
            return await body(ct).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (ct.IsCancellationRequested)
        {
            return 0;
        }
        catch (GrpcCallException e)
        {
            await Console.Error.WriteLineAsync($"agent refused: {e.Message}").ConfigureAwait(false);
            return 3;
        }
    }

    /// <summary>`sieveq demo send`: messages at a fixed rate (or as fast as the agent takes them), then waits for their acknowledgement.</summary>
    private static class DemoSend
    {
        public static Command Build()
        {
            var socket = new Option<string>("--socket") { Description = "The agent's Unix socket.", Required = true };
            var sender = new Option<int>("--sender") { Description = "Sender id (must be hosted by the agent).", Required = true };
            var receiver = new Option<int>("--receiver") { Description = "Receiver id.", Required = true };
            var rate = new Option<int>("--rate") { Description = "Messages per second (0: as fast as accepted).", DefaultValueFactory = _ => 1000 };
            var size = new Option<int>("--size") { Description = "Payload bytes (at least 8: the send timestamp).", DefaultValueFactory = _ => 500 };
            var count = new Option<long>("--count") { Description = "Messages to send (0: until Ctrl-C)." };
            var cmd = new Command("send", "Send demo messages through the agent; prints progress once a second.") { socket, sender, receiver, rate, size, count };
            cmd.SetAction((ParseResult p, CancellationToken ct) => RunUntilCancelledAsync(c => RunAsync(
                p.GetValue(socket)!, p.GetValue(sender), p.GetValue(receiver), p.GetValue(rate), Math.Max(8, p.GetValue(size)), p.GetValue(count), c), ct));
            return cmd;
        }

        private static async Task<int> RunAsync(string socketPath, int senderId, int receiverId, int rate, int size, long count, CancellationToken ct)
        {
            using var channel = GrpcChannel.ForUnixSocket(socketPath);
            var call = await channel.StartCallAsync<AppSend, SendProgress>(ProtocolNames.AgentService, ProtocolNames.Send, SendProgress.Parser, ct).ConfigureAwait(false);
            await using (call.ConfigureAwait(false))
            {
                await call.WriteAsync(new AppSend { Open = new OpenSender { Sender = senderId } }, ct).ConfigureAwait(false);
                var progress = new SendProgress();
                var reading = Task.Run(async () =>
                {
                    await foreach (var pr in call.ReadAllAsync(ct).ConfigureAwait(false))
                    {
                        if (pr.Error.Length > 0)
                        {
                            throw new GrpcCallException(GrpcStatusCode.PermissionDenied, pr.Error);
                        }
                        Volatile.Write(ref progress, pr);
                    }
                }, ct);
                using var printing = new CancellationTokenSource();
                var printer = PrintAsync(() => Volatile.Read(ref progress), printing.Token);
                var payload = new byte[size];
                var clock = Stopwatch.StartNew();
                long sent = 0;
                while ((count == 0 || sent < count) && !reading.IsCompleted)
                {
                    if (rate > 0)
                    {
                        var dueMs = sent * 1000 / rate;
                        var ahead = dueMs - clock.ElapsedMilliseconds;
                        if (ahead > 0)
                        {
                            await call.FlushAsync(ct).ConfigureAwait(false);
                            await Task.Delay(TimeSpan.FromMilliseconds(ahead), ct).ConfigureAwait(false);
                        }
                    }
                    BinaryPrimitives.WriteInt64BigEndian(payload, NowMicros());
                    await call.WriteAsync(new AppSend { Message = new OutgoingMessage { Receiver = receiverId, Data = ByteString.CopyFrom(payload) } }, ct, flush: rate is > 0 and < 5000).ConfigureAwait(false);
                    sent++;
                }
                await call.FlushAsync(ct).ConfigureAwait(false);
                await call.CompleteRequestAsync().ConfigureAwait(false);
                // The agent ends the call once everything accepted is acknowledged by f+1 replica-SQs.
                await reading.ConfigureAwait(false);
                await printing.CancelAsync().ConfigureAwait(false);
                await printer.ConfigureAwait(false);
                var last = Volatile.Read(ref progress);
                await Console.Out.WriteLineAsync(Line(last)).ConfigureAwait(false);
                return 0;
            }
        }

        private static string Line(SendProgress p) => string.Create(CultureInfo.InvariantCulture,
            $"{{\"t\":{DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() / 1000.0:F3},\"accepted\":{p.Accepted},\"last_seq\":{p.LastSeq},\"acknowledged\":{p.Acknowledged}}}");

        private static async Task PrintAsync(Func<SendProgress> progress, CancellationToken ct)
        {
            using var timer = new PeriodicTimer(TimeSpan.FromSeconds(1));
            try
            {
                while (await timer.WaitForNextTickAsync(ct).ConfigureAwait(false))
                {
                    await Console.Out.WriteLineAsync(Line(progress())).ConfigureAwait(false);
                }
            }
            catch (OperationCanceledException)
            {
                // done
            }
        }
    }

    /// <summary>`sieveq demo receive`: takes deliveries, commits them, prints one JSON line of throughput and latency per second.</summary>
    private static class DemoReceive
    {
        private const int CommitEvery = 256;

        public static Command Build()
        {
            var socket = new Option<string>("--socket") { Description = "The agent's Unix socket.", Required = true };
            var receiver = new Option<int>("--receiver") { Description = "Receiver id (must be hosted by the agent).", Required = true };
            var statsFile = new Option<FileInfo?>("--stats-file") { Description = "Also append the per-second JSON lines to this file." };
            var cmd = new Command("receive", "Receive through the agent; prints {t, delivered, rate, p50_ms, p99_ms} once a second.") { socket, receiver, statsFile };
            cmd.SetAction((ParseResult p, CancellationToken ct) => RunUntilCancelledAsync(c => RunAsync(p.GetValue(socket)!, p.GetValue(receiver), p.GetValue(statsFile)?.FullName, c), ct));
            return cmd;
        }

        /// <summary>Like any application of the agent, reconnects when its stream ends (agent restart): uncommitted deliveries come again.</summary>
        private static async Task<int> RunAsync(string socketPath, int receiverId, string? statsFile, CancellationToken ct)
        {
            var stats = new LatencyWindow();
            using var stop = CancellationTokenSource.CreateLinkedTokenSource(ct);
            var printer = PrintAsync(stats, statsFile, stop.Token);
            try
            {
                while (!ct.IsCancellationRequested)
                {
                    try
                    {
                        await ReceiveStreamAsync(socketPath, receiverId, stats, ct).ConfigureAwait(false);
                    }
                    catch (Exception e) when (e is IOException or HttpRequestException && !ct.IsCancellationRequested)
                    {
                        await Console.Error.WriteLineAsync($"receive stream ended ({e.Message}); reconnecting").ConfigureAwait(false);
                    }
                    await Task.Delay(TimeSpan.FromMilliseconds(500), ct).ConfigureAwait(false);
                }
                return 0;
            }
            finally
            {
                await stop.CancelAsync().ConfigureAwait(false);
                await printer.ConfigureAwait(false);
            }
        }

        private static async Task ReceiveStreamAsync(string socketPath, int receiverId, LatencyWindow stats, CancellationToken ct)
        {
            using var channel = GrpcChannel.ForUnixSocket(socketPath);
            var call = await channel.StartCallAsync<ReceiveControl, AppDelivery>(ProtocolNames.AgentService, ProtocolNames.Receive, AppDelivery.Parser, ct).ConfigureAwait(false);
            await using (call.ConfigureAwait(false))
            {
                await call.WriteAsync(new ReceiveControl { Open = new OpenReceiver { Receiver = receiverId } }, ct).ConfigureAwait(false);
                long uncommitted = 0;
                using var stop = CancellationTokenSource.CreateLinkedTokenSource(ct);
                var committer = CommitIdleAsync(call, () => Interlocked.Exchange(ref uncommitted, 0), stop.Token);
                try
                {
                    await foreach (var d in call.ReadAllAsync(ct).ConfigureAwait(false))
                    {
                        var sentAt = d.Data.Length >= 8 ? BinaryPrimitives.ReadInt64BigEndian(d.Data.Span) : NowMicros();
                        stats.Add((NowMicros() - sentAt) / 1000.0);
                        if (Interlocked.Increment(ref uncommitted) >= CommitEvery)
                        {
                            await call.WriteAsync(new ReceiveControl { Commit = Interlocked.Exchange(ref uncommitted, 0) }, ct).ConfigureAwait(false);
                        }
                    }
                }
                finally
                {
                    await stop.CancelAsync().ConfigureAwait(false);
                    await committer.ConfigureAwait(false);
                }
            }
        }

        /// <summary>Commits what was processed when deliveries pause, so the last ones of a burst are not left uncommitted.</summary>
        private static async Task CommitIdleAsync(GrpcDuplexCall<ReceiveControl, AppDelivery> call, Func<long> takeUncommitted, CancellationToken ct)
        {
            using var timer = new PeriodicTimer(TimeSpan.FromMilliseconds(100));
            try
            {
                while (await timer.WaitForNextTickAsync(ct).ConfigureAwait(false))
                {
                    var n = takeUncommitted();
                    if (n > 0)
                    {
                        await call.WriteAsync(new ReceiveControl { Commit = n }, ct).ConfigureAwait(false);
                    }
                }
            }
            catch (OperationCanceledException)
            {
                // stream over
            }
            catch (IOException)
            {
                // stream over
            }
        }

        private static async Task PrintAsync(LatencyWindow stats, string? statsFile, CancellationToken ct)
        {
            using var timer = new PeriodicTimer(TimeSpan.FromSeconds(1));
            var last = Stopwatch.StartNew();
            try
            {
                while (await timer.WaitForNextTickAsync(ct).ConfigureAwait(false))
                {
                    var (delivered, window, p50, p99) = stats.Take();
                    var rate = window / Math.Max(0.001, last.Elapsed.TotalSeconds);
                    last.Restart();
                    var line = string.Create(CultureInfo.InvariantCulture,
                        $"{{\"t\":{DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() / 1000.0:F3},\"delivered\":{delivered},\"rate\":{rate:F1},\"p50_ms\":{Json(p50)},\"p99_ms\":{Json(p99)}}}");
                    await Console.Out.WriteLineAsync(line).ConfigureAwait(false);
                    if (statsFile is not null)
                    {
                        await File.AppendAllTextAsync(statsFile, line + "\n", ct).ConfigureAwait(false);
                    }
                }
            }
            catch (OperationCanceledException)
            {
                // done
            }
        }

        private static string Json(double? v) => v is { } x ? x.ToString("F3", CultureInfo.InvariantCulture) : "null";
    }

    /// <summary>Delivered count and the latencies of the current one-second window.</summary>
    private sealed class LatencyWindow
    {
        private readonly Lock _lock = new();
        private List<double> _window = [];
        private long _delivered;

        public void Add(double latencyMs)
        {
            lock (_lock)
            {
                _window.Add(latencyMs);
                _delivered++;
            }
        }

        public (long Delivered, int Window, double? P50, double? P99) Take()
        {
            List<double> w;
            long delivered;
            lock (_lock)
            {
                w = _window;
                _window = [];
                delivered = _delivered;
            }
            if (w.Count == 0)
            {
                return (delivered, 0, null, null);
            }
            w.Sort();
            return (delivered, w.Count, w[(int)(0.50 * (w.Count - 1))], w[(int)(0.99 * (w.Count - 1))]);
        }
    }
}
