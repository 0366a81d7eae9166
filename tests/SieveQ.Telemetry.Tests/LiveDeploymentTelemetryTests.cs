using System.Buffers.Binary;
using System.Net;
using System.Net.Http.Headers;
using System.Text.Json;
using System.Text.RegularExpressions;
using Google.Protobuf;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;

namespace SieveQ.Telemetry.Tests;

/// <summary>
/// One `sieveq up` deployment, scraped over HTTP and exporting to this test's OTLP receiver: the dashboard's
/// metrics exist under the names it queries, and every component kind sends its metrics and its spans.
/// </summary>
public sealed partial class LiveDeploymentTelemetryTests(UpDeployment up) : IClassFixture<UpDeployment>
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task Up_prints_a_scrape_url_for_every_component_process()
    {
        Assert.Equal(
            ["agent-agent", "controller", "pre-sq-4", "pre-sq-5", "replica-sq-0", "replica-sq-1", "replica-sq-2", "replica-sq-3"],
            up.ScrapeUrls.Keys.Order(StringComparer.Ordinal));
        using var http = new HttpClient();
        foreach (var (name, url) in up.ScrapeUrls)
        {
            using var response = await http.GetAsync(url);
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            Assert.Equal("text/plain", response.Content.Headers.ContentType?.MediaType);
            var text = await response.Content.ReadAsStringAsync();
            // Each process says which component it is; ids only in the labels.
            var role = name.StartsWith("agent", StringComparison.Ordinal) ? "agent" : name.StartsWith("controller", StringComparison.Ordinal) ? "controller" : name[..name.LastIndexOf('-')];
            Assert.Contains($"service_name=\"sieveq-{role}\"", text, StringComparison.Ordinal);
            Assert.DoesNotContain("BEGIN", text, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task Every_metric_the_dashboard_queries_is_in_a_live_scrape()
    {
        var wanted = DashboardMetricNames();
        Assert.Contains("sieveq_sdk_delivered_total", wanted);
        Assert.Contains("sieveq_drops_total", wanted);
        // A drop at the pre-SQ, so the sieve's drop counter has a point to show (a counter appears with its first measurement).
        await SendMalformedFrameAsync(up.PreSqUrls.Values.First());
        var deadline = DateTime.UtcNow + Patience;
        HashSet<string> scraped;
        do
        {
            scraped = await ScrapeAllAsync();
            if (wanted.IsSubsetOf(scraped))
            {
                break;
            }
            await Task.Delay(500);
        }
        while (DateTime.UtcNow < deadline);
        var missing = wanted.Except(scraped).Order(StringComparer.Ordinal).ToList();
        Assert.True(missing.Count == 0, $"the dashboard queries metrics no component serves: {string.Join(", ", missing)}");
    }

    [Fact]
    public async Task Every_component_kind_exports_metrics_and_spans_over_otlp()
    {
        (string Service, string Scope, string Name)[] spans =
        [
            ("sieveq-agent", "SieveQ.Sdk", "sender send batch"),
            ("sieveq-pre-sq", "SieveQ.PreSq", "pre-sq order batch"),
            ("sieveq-replica-sq", "SieveQ.ReplicaSq", "replica-sq execute"),
            ("sieveq-agent", "SieveQ.Sdk", "receiver deliver"),
        ];
        (string Service, string Name)[] metrics =
        [
            ("sieveq-agent", "sieveq.sdk.delivered"),
            ("sieveq-pre-sq", "sieveq.presq.frames.received"),
            ("sieveq-pre-sq", "sieveq.presq.ordering.latency"),
            ("sieveq-replica-sq", "sieveq.bft.last_decided"),
            ("sieveq-replica-sq", "sieveq.replicasq.outputs.sent"),
        ];
        var deadline = DateTime.UtcNow + Patience;
        while (DateTime.UtcNow < deadline && !(spans.All(HasSpan) && metrics.All(HasMetric)))
        {
            await Task.Delay(500);
        }
        Assert.All(spans, s => Assert.True(HasSpan(s), $"no span {s} received; spans: {Describe(up.Receiver.Spans)}"));
        Assert.All(metrics, m => Assert.True(HasMetric(m), $"no metric {m} received; metrics: {Describe(up.Receiver.Metrics)}"));
        Assert.Equal(0, up.Receiver.Malformed);

        bool HasSpan((string Service, string Scope, string Name) s) => up.Receiver.Spans.Contains(new ReceivedSignal(s.Service, s.Scope, s.Name));
        bool HasMetric((string Service, string Name) m) => up.Receiver.Metrics.Any(r => r.Service == m.Service && r.Name == m.Name);
    }

    private static string Describe(IEnumerable<ReceivedSignal> signals) =>
        string.Join("; ", signals.Distinct().Take(60).Select(s => $"{s.Service}/{s.Scope}/{s.Name}"));

    /// <summary>Every metric name in the dashboard's queries (the series a query names, suffixes included).</summary>
    internal static HashSet<string> DashboardMetricNames()
    {
        using var doc = JsonDocument.Parse(File.ReadAllText(SieveqProcess.DashboardJson));
        var names = new HashSet<string>(StringComparer.Ordinal);
        var panels = doc.RootElement.GetProperty("panels").EnumerateArray().ToList();
        Assert.NotEmpty(panels);
        foreach (var panel in panels)
        {
            var inPanel = panel.GetProperty("targets").EnumerateArray()
                .SelectMany(t => MetricName().Matches(t.GetProperty("expr").GetString()!).Select(m => m.Value))
                .ToList();
            Assert.True(inPanel.Count > 0, $"panel {panel.GetProperty("title")} queries no SieveQ metric");
            names.UnionWith(inPanel);
        }
        return names;
    }

    private async Task<HashSet<string>> ScrapeAllAsync()
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        var names = new HashSet<string>(StringComparer.Ordinal);
        foreach (var url in up.ScrapeUrls.Values)
        {
            foreach (var line in (await http.GetStringAsync(url)).Split('\n'))
            {
                if (line.Length == 0 || line[0] == '#')
                {
                    continue;
                }
                var end = line.IndexOfAny(['{', ' ']);
                names.Add(end < 0 ? line : line[..end]);
            }
        }
        return names;
    }

    /// <summary>One Exchange call whose frame is not a sender frame: gRPC framing by hand over HTTP/2, as any client could send it.</summary>
    private static async Task SendMalformedFrameAsync(Uri preSq)
    {
        var frame = new SenderFrame { Canonical = ByteString.CopyFrom(new byte[] { 0x7f, 1, 2, 3, 4, 5, 6, 7 }) }.ToByteArray();
        var body = new byte[5 + frame.Length];
        BinaryPrimitives.WriteUInt32BigEndian(body.AsSpan(1), (uint)frame.Length);
        frame.CopyTo(body, 5);
        // The pre-SQ serves TLS with a key the deployment pins; this frame only has to reach its parser, so any key will do.
        using var handler = new SocketsHttpHandler
        {
            SslOptions = { RemoteCertificateValidationCallback = (_, _, _, _) => true, ApplicationProtocols = [System.Net.Security.SslApplicationProtocol.Http2] },
        };
        using var http = new HttpClient(handler) { Timeout = TimeSpan.FromSeconds(10) };
        using var request = new HttpRequestMessage(HttpMethod.Post, new Uri(preSq, $"/{ProtocolNames.PreSqService}/{ProtocolNames.Exchange}"))
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
            Content = new ByteArrayContent(body),
        };
        request.Content.Headers.ContentType = new MediaTypeHeaderValue("application/grpc");
        request.Headers.TryAddWithoutValidation("te", "trailers");
        using var response = await http.SendAsync(request);
        await response.Content.ReadAsByteArrayAsync();
    }

    [GeneratedRegex(@"\bsieveq_[a-z0-9_]+\b")]
    private static partial Regex MetricName();
}
