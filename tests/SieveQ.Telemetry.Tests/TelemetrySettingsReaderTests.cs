namespace SieveQ.Telemetry.Tests;

public sealed class TelemetrySettingsReaderTests
{
    [Fact]
    public void Nothing_configured_means_no_export_and_no_scrape()
    {
        var options = TelemetrySettingsReader.Read("sieveq-pre-sq", "pre-sq 4", null, null, null, _ => null);
        Assert.False(options.Exports);
        Assert.Null(options.ScrapeListen);
    }

    [Fact]
    public void The_standard_variables_are_read_and_an_argument_wins_over_its_variable()
    {
        var env = new Dictionary<string, string>
        {
            [TelemetrySettingsReader.EndpointVariable] = "http://collector:4318",
            [TelemetrySettingsReader.ProtocolVariable] = "grpc",
            [TelemetrySettingsReader.IntervalVariable] = "2500",
        };
        var fromVariables = TelemetrySettingsReader.Read("s", "i", null, null, null, env.GetValueOrDefault);
        Assert.Equal(new Uri("http://collector:4318"), fromVariables.OtlpEndpoint);
        Assert.Equal(OtlpTransport.Grpc, fromVariables.OtlpTransport);
        Assert.Equal(TimeSpan.FromMilliseconds(2500), fromVariables.MetricExportInterval);

        var fromArguments = TelemetrySettingsReader.Read("s", "i", "https://other:4318", "http/protobuf", "[::1]:9464", env.GetValueOrDefault);
        Assert.Equal(new Uri("https://other:4318"), fromArguments.OtlpEndpoint);
        Assert.Equal(OtlpTransport.HttpProtobuf, fromArguments.OtlpTransport);
        Assert.Equal(9464, fromArguments.ScrapeListen!.Port);
    }
}
