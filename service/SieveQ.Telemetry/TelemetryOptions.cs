using System.Globalization;
using System.Net;

namespace SieveQ.Telemetry;

/// <summary>How OTLP export is carried: the two transports of the OpenTelemetry protocol.</summary>
public enum OtlpTransport
{
    /// <summary>OTLP/HTTP with protobuf bodies: POST {endpoint}/v1/metrics and /v1/traces.</summary>
    HttpProtobuf,

    /// <summary>OTLP/gRPC: the endpoint is the collector's gRPC address.</summary>
    Grpc,
}

/// <summary>
/// A component's telemetry settings: where it exports (nowhere unless told) and where it can be scraped (nowhere
/// unless told). Built from the command line and the standard OTEL_* variables by <see cref="TelemetrySettingsReader"/>.
/// </summary>
public sealed record TelemetryOptions
{
    /// <summary>The OTLP collector's base URL (null: no export). For OTLP/HTTP the signal paths /v1/metrics and /v1/traces are appended.</summary>
    public Uri? OtlpEndpoint { get; init; }

    public OtlpTransport OtlpTransport { get; init; } = OtlpTransport.HttpProtobuf;

    /// <summary>How often metrics are pushed to the collector (the OpenTelemetry default is 60 s).</summary>
    public TimeSpan MetricExportInterval { get; init; } = TimeSpan.FromSeconds(60);

    /// <summary>The loopback address and port of the Prometheus scrape listener (null: none). Port 0 takes a free port.</summary>
    public IPEndPoint? ScrapeListen { get; init; }

    /// <summary>service.name, e.g. "sieveq-pre-sq".</summary>
    public string ServiceName { get; init; } = "sieveq";

    /// <summary>service.instance.id, e.g. "pre-sq 1": ids only, never key material.</summary>
    public string ServiceInstance { get; init; } = "";

    /// <summary>The path Prometheus scrapes.</summary>
    public const string ScrapePath = "/metrics";

    public static readonly TimeSpan ShortestExportInterval = TimeSpan.FromMilliseconds(100);

    public static readonly TimeSpan LongestExportInterval = TimeSpan.FromHours(1);

    public bool Exports => OtlpEndpoint is not null;

    /// <summary>Throws <see cref="ArgumentException"/> with the reason when these settings cannot be used.</summary>
    public void Validate()
    {
        if (OtlpEndpoint is { } endpoint)
        {
            ValidateEndpoint(endpoint.OriginalString, "the OTLP endpoint");
        }
        if (MetricExportInterval < ShortestExportInterval || MetricExportInterval > LongestExportInterval)
        {
            throw new ArgumentException(string.Create(CultureInfo.InvariantCulture,
                $"the metric export interval must be between {ShortestExportInterval.TotalMilliseconds} ms and {LongestExportInterval.TotalHours} h, not {MetricExportInterval.TotalMilliseconds} ms"));
        }
        if (ScrapeListen is { } listen && !IPAddress.IsLoopback(listen.Address))
        {
            // The scrape has no authentication (docs/telemetry.md): it is served on loopback only.
            throw new ArgumentException($"--metrics-listen {listen}: the scrape endpoint listens on loopback only (127.0.0.1 or [::1]); scrape remotely through a local agent");
        }
    }

    /// <summary>An absolute http or https URL without credentials, query or fragment; else why not.</summary>
    internal static Uri ValidateEndpoint(string text, string what)
    {
        if (!Uri.TryCreate(text, UriKind.Absolute, out var uri) || uri.IsFile || string.IsNullOrEmpty(uri.Host))
        {
            throw new ArgumentException($"{what} '{text}' is not an absolute URL (e.g. http://127.0.0.1:4318)");
        }
        if (uri.Scheme != Uri.UriSchemeHttp && uri.Scheme != Uri.UriSchemeHttps)
        {
            throw new ArgumentException($"{what} '{text}' must be an http or https URL, not {uri.Scheme}");
        }
        if (!string.IsNullOrEmpty(uri.UserInfo))
        {
            // It would be exported as a resource attribute or logged; credentials belong in OTEL_EXPORTER_OTLP_HEADERS.
            throw new ArgumentException($"{what} must not carry credentials in its URL");
        }
        if (!string.IsNullOrEmpty(uri.Query) || !string.IsNullOrEmpty(uri.Fragment))
        {
            throw new ArgumentException($"{what} '{text}' must not have a query or fragment");
        }
        return uri;
    }
}
