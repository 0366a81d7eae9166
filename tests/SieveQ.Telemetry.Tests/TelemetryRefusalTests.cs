using System.Net;
using System.Net.Sockets;

namespace SieveQ.Telemetry.Tests;

/// <summary>
/// Malformed telemetry settings refuse a component at start (exit code 1, the setting named on stderr) instead of
/// running it without the export it was asked for. Real `sieveq` processes; the deployment directory does not
/// exist, so a start that got past telemetry would fail on it with a different message.
/// </summary>
public sealed class TelemetryRefusalTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    public static TheoryData<string, string[], string?, string> Refusals => new()
    {
        { "pre-sq", ["--otlp-endpoint", "collector:4318 please"], null, "--otlp-endpoint 'collector:4318 please' is not an absolute URL" },
        { "replica-sq", ["--otlp-endpoint", "ftp://127.0.0.1:4318"], null, "must be an http or https URL, not ftp" },
        { "agent", [], "OTEL_EXPORTER_OTLP_ENDPOINT=127.0.0.1", "OTEL_EXPORTER_OTLP_ENDPOINT '127.0.0.1' is not an absolute URL" },
        { "controller", ["--otlp-endpoint", "http://user:secret@127.0.0.1:4318"], null, "must not carry credentials in its URL" },
        { "pre-sq", ["--otlp-endpoint", "http://127.0.0.1:4318", "--otlp-protocol", "thrift"], null, "--otlp-protocol 'thrift' is not an OTLP protocol" },
        { "replica-sq", [], "OTEL_METRIC_EXPORT_INTERVAL=soon", "OTEL_METRIC_EXPORT_INTERVAL 'soon' is not a number of milliseconds" },
        { "pre-sq", ["--metrics-listen", "0.0.0.0:9464"], null, "listens on loopback only" },
        { "agent", ["--metrics-listen", "localhost"], null, "--metrics-listen 'localhost' is not an address and port" },
    };

    [Theory]
    [MemberData(nameof(Refusals))]
    public async Task A_malformed_setting_refuses_the_start_and_names_it(string component, string[] telemetry, string? variable, string expected)
    {
        var (code, _, stderr) = await SieveqProcess.RunAsync(Args(component, telemetry), Timeout, Environment(variable));
        Assert.Equal(1, code);
        Assert.Contains("telemetry: ", stderr, StringComparison.Ordinal);
        Assert.Contains(expected, stderr, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Valid_settings_get_past_telemetry_to_the_components_own_start()
    {
        var (code, _, stderr) = await SieveqProcess.RunAsync(
            Args("pre-sq", ["--otlp-endpoint", "http://127.0.0.1:4318/", "--otlp-protocol", "grpc", "--metrics-listen", "127.0.0.1:0"]), Timeout,
            Environment("OTEL_METRIC_EXPORT_INTERVAL=500"));
        Assert.Equal(1, code);
        Assert.DoesNotContain("telemetry", stderr, StringComparison.Ordinal);
        Assert.Contains("deployment", stderr, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public async Task A_scrape_port_in_use_refuses_the_start()
    {
        using var taken = new TcpListener(IPAddress.Loopback, 0);
        taken.Start();
        var port = ((IPEndPoint)taken.LocalEndpoint).Port;
        var (code, _, stderr) = await SieveqProcess.RunAsync(Args("replica-sq", ["--metrics-listen", $"127.0.0.1:{port}"]), Timeout);
        Assert.Equal(1, code);
        Assert.Contains($"--metrics-listen 127.0.0.1:{port}: cannot listen", stderr, StringComparison.Ordinal);
    }

    private static IEnumerable<string> Args(string component, string[] telemetry)
    {
        var missing = Path.Combine(Path.GetTempPath(), "sieveq-no-such-deployment-" + Guid.NewGuid().ToString("N"));
        IEnumerable<string> args = component switch
        {
            "controller" => ["controller", "--deployment", missing],
            "agent" => ["agent", "--deployment", missing],
            _ => [component, "--deployment", missing, "--id", "4"],
        };
        return args.Concat(["--log-level", "warning"]).Concat(telemetry);
    }

    private static Dictionary<string, string>? Environment(string? variable) =>
        variable?.Split('=', 2) is [var key, var value] ? new() { [key] = value } : null;
}
