using System.CommandLine;
using System.Globalization;
using Microsoft.Extensions.Logging;
using SieveQ.Cli.Running;
using SieveQ.Deployment;
using SieveQ.PreSq;

namespace SieveQ.Cli.Commands;

/// <summary>`sieveq pre-sq --deployment DIR --id N`: runs one pre-SQ gateway until SIGTERM or Ctrl-C.</summary>
internal static class PreSqCommand
{
    public static Command Build()
    {
        var d = new PreSqHostOptions();
        var deployment = DeploymentOption.Required("Deployment directory (holding deployment.json).");
        var id = new Option<int>("--id") { Description = "This pre-SQ's id: its ordering-client id in deployment.json.", Required = true };
        var logLevel = new Option<LogLevel>("--log-level") { Description = "Minimum log level (logs go to stderr).", DefaultValueFactory = _ => LogLevel.Information };

        var maxConnections = new Option<long?>("--max-connections") { Description = $"Open connections in total (default {d.MaxConnections})." };
        var perSource = new Option<int?>("--max-connections-per-source") { Description = $"Open connections per IPv4 address or IPv6 /64 (default {d.MaxConnectionsPerSource})." };
        var keepAlive = new Option<string?>("--keep-alive-timeout") { Description = $"Idle connection lifetime, e.g. 60s (default {Seconds(d.KeepAliveTimeout)})." };
        var headers = new Option<string?>("--request-headers-timeout") { Description = $"Time to deliver request headers (default {Seconds(d.RequestHeadersTimeout)})." };
        var minBodyRate = new Option<double?>("--min-body-rate") { Description = $"Bytes/s a unary request body must keep up (default {d.MinRequestBodyBytesPerSecond}); Exchange streams are exempt." };
        var minResponseRate = new Option<double?>("--min-response-rate") { Description = $"Bytes/s a client must read responses at (default {d.MinResponseBytesPerSecond})." };
        var grace = new Option<string?>("--min-rate-grace") { Description = $"Grace period of both minimum rates, above 1s (default {Seconds(d.MinDataRateGracePeriod)})." };
        var unbound = new Option<string?>("--unbound-stream-timeout") { Description = $"An Exchange stream with no valid frame by then is ended (default {Seconds(d.UnboundStreamTimeout)})." };
        var streams = new Option<int?>("--max-streams-per-connection") { Description = $"HTTP/2 concurrent streams per connection (default {d.MaxStreamsPerConnection})." };
        var headerField = new Option<int?>("--max-header-field-bytes") { Description = $"Largest HTTP/2 header field (default {d.MaxRequestHeaderFieldBytes})." };
        var window = new Option<int?>("--connection-window-bytes") { Description = $"HTTP/2 initial connection window (default {d.InitialConnectionWindowBytes})." };
        var maxMessage = new Option<int?>("--max-message-bytes") { Description = $"Largest gRPC message (default {d.MaxMessageBytes})." };
        var inbound = new Option<int?>("--inbound-queue") { Description = $"Items waiting for the event loop before input is shed (default {d.InboundQueueItems})." };
        var inFlight = new Option<int?>("--max-in-flight") { Description = $"Ordering requests in flight (default {d.MaxOrderingInFlight})." };
        var streamQueue = new Option<int?>("--stream-queue") { Description = $"ACKRES queued per sender stream (default {d.StreamQueueEvents})." };
        var capacity = new Option<double?>("--capacity") { Description = $"Frames/s this pre-SQ can take; WARNREQ from {d.WarnAtPermille / 10}% of it (default {d.CapacityPerSecond})." };
        var batchItems = new Option<int?>("--batch-max-items") { Description = $"Items per ordering request (default {d.Filter.BatchMaxItems})." };
        var batchDelay = new Option<long?>("--batch-max-delay-ms") { Description = $"Longest wait of a batch's first item (default {d.Filter.BatchMaxDelayMs})." };
        var grantRate = new Option<long?>("--grant-rate") { Description = $"Default grant per sender, messages/s (default {d.Filter.GrantRatePerSecond})." };
        var grantBurst = new Option<long?>("--grant-burst") { Description = $"Default grant burst per sender (default {d.Filter.GrantBurst})." };

        var cmd = new Command("pre-sq", "Run one pre-SQ gateway (SIGTERM or Ctrl-C stops it cleanly).")
        {
            deployment, id, logLevel, maxConnections, perSource, keepAlive, headers, minBodyRate, minResponseRate, grace, unbound, streams,
            headerField, window, maxMessage, inbound, inFlight, streamQueue, capacity, batchItems, batchDelay, grantRate, grantBurst,
        };
        var telemetry = TelemetryArguments.AddTo(cmd);
        cmd.SetAction(async (parse, ct) =>
        {
            TimeSpan Duration(Option<string?> o, TimeSpan fallback) => parse.GetValue(o) is { } text ? ClusterSupport.ParseDuration(text) : fallback;
            var options = d with
            {
                MaxConnections = parse.GetValue(maxConnections) ?? d.MaxConnections,
                MaxConnectionsPerSource = parse.GetValue(perSource) ?? d.MaxConnectionsPerSource,
                KeepAliveTimeout = Duration(keepAlive, d.KeepAliveTimeout),
                RequestHeadersTimeout = Duration(headers, d.RequestHeadersTimeout),
                MinRequestBodyBytesPerSecond = parse.GetValue(minBodyRate) ?? d.MinRequestBodyBytesPerSecond,
                MinResponseBytesPerSecond = parse.GetValue(minResponseRate) ?? d.MinResponseBytesPerSecond,
                MinDataRateGracePeriod = Duration(grace, d.MinDataRateGracePeriod),
                UnboundStreamTimeout = Duration(unbound, d.UnboundStreamTimeout),
                MaxStreamsPerConnection = parse.GetValue(streams) ?? d.MaxStreamsPerConnection,
                MaxRequestHeaderFieldBytes = parse.GetValue(headerField) ?? d.MaxRequestHeaderFieldBytes,
                InitialConnectionWindowBytes = parse.GetValue(window) ?? d.InitialConnectionWindowBytes,
                MaxMessageBytes = parse.GetValue(maxMessage) ?? d.MaxMessageBytes,
                InboundQueueItems = parse.GetValue(inbound) ?? d.InboundQueueItems,
                MaxOrderingInFlight = parse.GetValue(inFlight) ?? d.MaxOrderingInFlight,
                StreamQueueEvents = parse.GetValue(streamQueue) ?? d.StreamQueueEvents,
                CapacityPerSecond = parse.GetValue(capacity) ?? d.CapacityPerSecond,
                Filter = d.Filter with
                {
                    BatchMaxItems = parse.GetValue(batchItems) ?? d.Filter.BatchMaxItems,
                    BatchMaxDelayMs = parse.GetValue(batchDelay) ?? d.Filter.BatchMaxDelayMs,
                    GrantRatePerSecond = parse.GetValue(grantRate) ?? d.Filter.GrantRatePerSecond,
                    GrantBurst = parse.GetValue(grantBurst) ?? d.Filter.GrantBurst,
                },
            };
            var preSq = parse.GetValue(id);
            return await RunAsync(parse.GetValue(deployment)!.FullName, preSq, options, telemetry.Read(parse, "pre-sq", $"pre-sq {preSq}"), parse.GetValue(logLevel), ct)
                .ConfigureAwait(false);
        });
        return cmd;
    }

    /// <summary>What `pre-sq` parsed: validated when its host starts.</summary>
    private sealed record PreSqArguments(string Directory, int Id, PreSqHostOptions Options);

    private static Task<int> RunAsync(string directory, int id, PreSqHostOptions options, TelemetrySettings telemetry, LogLevel level, CancellationToken ct)
    {
        ClusterSupport.PreferInlineSocketCompletions();
        using var stop = new StopSignal(ct);
        return ComponentHost.RunAsync($"pre-sq {id}", level, new PreSqArguments(directory, id, options), telemetry, Validate, StartAsync, stop.Token);
    }

    /// <summary>The pre-SQ's own option checks (<see cref="PreSqHostOptions.Validate"/>), as the host's start-time validation.</summary>
    private static string? Validate(PreSqArguments a) => ComponentArguments.Problem(a.Id, a.Options.Validate);

    private static async Task<RunningComponent> StartAsync(PreSqArguments a, ILoggerFactory logs, CancellationToken ct)
    {
        PreSqHost host;
        try
        {
            host = PreSqHost.Create(DeploymentContext.Load(a.Directory), a.Id, a.Options, logs);
        }
        catch (Exception e) when (e is DeploymentException or ArgumentException or IOException or System.Security.Cryptography.CryptographicException)
        {
            throw new ComponentStartException($"pre-sq {a.Id}: {e.Message}", e);
        }
        try
        {
            await host.StartAsync(ct).ConfigureAwait(false);
        }
        catch (Exception e)
        {
            await host.DisposeAsync().ConfigureAwait(false);
            if (e is IOException)
            {
                throw new ComponentStartException($"pre-sq {a.Id}: cannot listen on {host.Address}: {e.Message}", e);
            }
            throw;
        }
        Console.WriteLine($"pre-sq {a.Id} listening on {host.Address}");
        return new RunningComponent(host.Completion, $"pre-sq {a.Id} event loop", StatusJson: null, host.DisposeAsync);
    }

    private static string Seconds(TimeSpan t) => t.TotalSeconds.ToString(CultureInfo.InvariantCulture) + "s";
}
