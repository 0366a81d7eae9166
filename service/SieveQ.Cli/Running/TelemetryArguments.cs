using System.CommandLine;
using SieveQ.Telemetry;

namespace SieveQ.Cli.Running;

/// <summary>What a component command read for its telemetry: the settings, or why they cannot be used (refused at start).</summary>
internal sealed record TelemetrySettings(TelemetryOptions? Options, string? Problem);

/// <summary>
/// The telemetry arguments every component command takes (pre-sq, replica-sq, replica, agent, controller); each
/// falls back on its standard OTEL_* variable (docs/telemetry.md).
/// </summary>
internal sealed class TelemetryArguments
{
    private readonly Option<string?> _endpoint = new("--otlp-endpoint")
    {
        Description = $"Export metrics and traces over OTLP to this collector URL, e.g. http://127.0.0.1:4318 (default: ${TelemetrySettingsReader.EndpointVariable}; none: no export).",
    };

    private readonly Option<string?> _protocol = new("--otlp-protocol")
    {
        Description = $"http/protobuf (default) or grpc (default: ${TelemetrySettingsReader.ProtocolVariable}).",
    };

    private readonly Option<string?> _listen = new("--metrics-listen")
    {
        Description = "Serve the Prometheus scrape endpoint (GET /metrics) on this loopback address and port, e.g. 127.0.0.1:9464 (default: none).",
    };

    /// <summary>Adds the options to a component command.</summary>
    public static TelemetryArguments AddTo(Command command)
    {
        var arguments = new TelemetryArguments();
        command.Options.Add(arguments._endpoint);
        command.Options.Add(arguments._protocol);
        command.Options.Add(arguments._listen);
        return arguments;
    }

    /// <param name="role">The component kind, e.g. "pre-sq": service.name is "sieveq-" + role.</param>
    /// <param name="instance">The component as its messages name it, e.g. "pre-sq 1": service.instance.id.</param>
    public TelemetrySettings Read(ParseResult parse, string role, string instance)
    {
        try
        {
            return new(TelemetrySettingsReader.Read("sieveq-" + role, instance, parse.GetValue(_endpoint), parse.GetValue(_protocol), parse.GetValue(_listen),
                Environment.GetEnvironmentVariable), null);
        }
        catch (ArgumentException e)
        {
            return new(null, "telemetry: " + e.Message);
        }
    }
}
