using System.Globalization;
using System.Net;

namespace SieveQ.Telemetry;

/// <summary>
/// Turns the command line's telemetry arguments and the standard OpenTelemetry variables into
/// <see cref="TelemetryOptions"/>. An argument wins over its variable. Malformed values are refused with the
/// variable or argument named, never ignored: a component started with export asked for must not run without it.
/// </summary>
public static class TelemetrySettingsReader
{
    public const string EndpointVariable = "OTEL_EXPORTER_OTLP_ENDPOINT";
    public const string ProtocolVariable = "OTEL_EXPORTER_OTLP_PROTOCOL";
    public const string IntervalVariable = "OTEL_METRIC_EXPORT_INTERVAL";

    /// <param name="otlpEndpoint">--otlp-endpoint, or null.</param>
    /// <param name="otlpProtocol">--otlp-protocol ("http/protobuf" or "grpc"), or null.</param>
    /// <param name="metricsListen">--metrics-listen ("127.0.0.1:9464", "[::1]:9464"), or null.</param>
    /// <param name="environment">Reads a variable (Environment.GetEnvironmentVariable in the product).</param>
    /// <exception cref="ArgumentException">A value is malformed; the message names it.</exception>
    public static TelemetryOptions Read(string serviceName, string serviceInstance, string? otlpEndpoint, string? otlpProtocol, string? metricsListen,
        Func<string, string?> environment)
    {
        ArgumentNullException.ThrowIfNull(environment);
        var endpointText = otlpEndpoint ?? NonEmpty(environment(EndpointVariable));
        var endpointSource = otlpEndpoint is null ? EndpointVariable : "--otlp-endpoint";
        var protocolText = otlpProtocol ?? NonEmpty(environment(ProtocolVariable));
        var protocolSource = otlpProtocol is null ? ProtocolVariable : "--otlp-protocol";
        var options = new TelemetryOptions
        {
            ServiceName = serviceName,
            ServiceInstance = serviceInstance,
            OtlpEndpoint = endpointText is null ? null : TelemetryOptions.ValidateEndpoint(endpointText, endpointSource),
            OtlpTransport = protocolText is null ? OtlpTransport.HttpProtobuf : ParseProtocol(protocolText, protocolSource),
            MetricExportInterval = NonEmpty(environment(IntervalVariable)) is { } interval ? ParseInterval(interval) : new TelemetryOptions().MetricExportInterval,
            ScrapeListen = metricsListen is null ? null : ParseListen(metricsListen),
        };
        options.Validate();
        return options;
    }

    private static string? NonEmpty(string? value) => string.IsNullOrWhiteSpace(value) ? null : value.Trim();

    private static OtlpTransport ParseProtocol(string text, string source) => text switch
    {
        "http/protobuf" => OtlpTransport.HttpProtobuf,
        "grpc" => OtlpTransport.Grpc,
        _ => throw new ArgumentException($"{source} '{text}' is not an OTLP protocol: use http/protobuf or grpc"),
    };

    private static TimeSpan ParseInterval(string text) =>
        long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var ms) && ms > 0 && ms <= TelemetryOptions.LongestExportInterval.TotalMilliseconds
            ? TimeSpan.FromMilliseconds(ms)
            : throw new ArgumentException($"{IntervalVariable} '{text}' is not a number of milliseconds between 100 and 3600000");

    private static IPEndPoint ParseListen(string text) =>
        IPEndPoint.TryParse(text, out var endpoint) && (text.StartsWith('[') ? text.Contains("]:", StringComparison.Ordinal) : text.Contains(':', StringComparison.Ordinal))
            ? endpoint
            : throw new ArgumentException($"--metrics-listen '{text}' is not an address and port such as 127.0.0.1:9464");
}
