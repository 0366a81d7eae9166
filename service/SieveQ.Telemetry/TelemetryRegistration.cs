using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using OpenTelemetry;
using OpenTelemetry.Exporter;
using OpenTelemetry.Metrics;
using OpenTelemetry.Resources;
using OpenTelemetry.Trace;

namespace SieveQ.Telemetry;

/// <summary>
/// What every component host calls: every SieveQ meter (and, when exporting, every activity source) into one
/// OpenTelemetry pipeline; the OTLP exporter when an endpoint is configured; the scrape listener when asked.
/// </summary>
public static class TelemetryRegistration
{
    /// <summary>Registers telemetry in a host. Call before the component's own hosted service, so the scrape listener starts first.</summary>
    /// <param name="options">Validated settings (<see cref="TelemetrySettingsReader"/>).</param>
    public static IServiceCollection AddSieveQTelemetry(this IServiceCollection services, TelemetryOptions options)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        services.AddSingleton(options);
        if (!options.Exports && options.ScrapeListen is null)
        {
            // Nothing reads them: the instruments stay unobserved and cost nothing.
            return services;
        }
        var otel = services.AddOpenTelemetry()
            .ConfigureResource(r => r.AddService(options.ServiceName, serviceVersion: typeof(TelemetryRegistration).Assembly.GetName().Version?.ToString(),
                serviceInstanceId: options.ServiceInstance))
            .WithMetrics(m =>
            {
                m.AddMeter(SieveQTelemetrySources.MeterPattern);
                if (options.ScrapeListen is not null)
                {
                    m.AddPrometheusExporter();
                }
                if (options.OtlpEndpoint is { } endpoint)
                {
                    m.AddOtlpExporter((exporter, reader) =>
                    {
                        Configure(exporter, options, endpoint, "v1/metrics");
                        reader.PeriodicExportingMetricReaderOptions.ExportIntervalMilliseconds = (int)options.MetricExportInterval.TotalMilliseconds;
                    });
                }
            });
        if (options.OtlpEndpoint is { } traceEndpoint)
        {
            // Spans only go to a collector: without one no listener is attached and starting an activity is a null check.
            otel.WithTracing(t => t
                .AddSource(SieveQTelemetrySources.ActivitySourcePattern)
                .AddOtlpExporter(exporter => Configure(exporter, options, traceEndpoint, "v1/traces")));
        }
        if (options.ScrapeListen is not null)
        {
            services.AddSingleton<ScrapeListener>();
            services.AddSingleton<IHostedService>(s => s.GetRequiredService<ScrapeListener>());
        }
        return services;
    }

    /// <summary>The scrape URL once the host has started (null without a scrape listener).</summary>
    public static Uri? ScrapeUrl(IServiceProvider services)
    {
        ArgumentNullException.ThrowIfNull(services);
        return services.GetService<ScrapeListener>()?.Url;
    }

    private static void Configure(OtlpExporterOptions exporter, TelemetryOptions options, Uri endpoint, string signalPath)
    {
        exporter.Protocol = options.OtlpTransport == OtlpTransport.Grpc ? OtlpExportProtocol.Grpc : OtlpExportProtocol.HttpProtobuf;
        // OTLP/HTTP takes a set endpoint as the full signal URL; the base URL is what OTEL_EXPORTER_OTLP_ENDPOINT means, so the path is added here.
        exporter.Endpoint = options.OtlpTransport == OtlpTransport.Grpc ? endpoint : new Uri(WithTrailingSlash(endpoint), signalPath);
    }

    private static Uri WithTrailingSlash(Uri endpoint) =>
        endpoint.AbsoluteUri.EndsWith('/') ? endpoint : new Uri(endpoint.AbsoluteUri + "/");
}
