using System.Diagnostics.Metrics;
using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Time.Testing;
using SieveQ.AdminUi.AlarmDelivery;
using SieveQ.AdminUi.Figures;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.Tests;

/// <summary>
/// Webhook delivery against a real HTTP server on loopback: the signed document, bounded retries, the bounded queue,
/// and a dead receiver that holds up no other channel. Time is a FakeTimeProvider: back-off and time-outs pass only
/// when a test advances it.
/// </summary>
public sealed class AlarmWebhookDeliveryTests : IAsyncLifetime
{
    private const string Secret = "0123456789abcdef-webhook-secret";
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2026, 11, 27, 6, 0, 0, TimeSpan.Zero));
    private readonly ServiceProvider _services = new ServiceCollection().AddMetrics().AddSingleton<AlarmDeliveryMetrics>().BuildServiceProvider();
    private readonly CancellationTokenSource _stop = new();
    private readonly List<Task> _loops = [];
    private LoopbackWebhookReceiver _receiver = null!;

    public async Task InitializeAsync() => _receiver = await LoopbackWebhookReceiver.StartAsync();

    public async Task DisposeAsync()
    {
        await _stop.CancelAsync();
        await Task.WhenAll(_loops);
        await _receiver.DisposeAsync();
        await _services.DisposeAsync();
        _stop.Dispose();
    }

    private static AlarmDeliveryConfig Config(int attempts = 3, int capacity = 100, AlarmQueueFullPolicy full = AlarmQueueFullPolicy.DropOldest) => new()
    {
        Instance = "console-test",
        MaxAttempts = attempts,
        QueueCapacity = capacity,
        WhenQueueFull = full,
        RetryFirstDelaySeconds = 1,
        // Longer than any back-off a test advances through, so only a hung receiver's try ever times out.
        RequestTimeoutSeconds = 300,
        MaxPerMinute = 600,
    };

    private AlarmChannelQueue Queue(string url, AlarmDeliveryConfig config, string name = "ops", string? pin = null) =>
        new(new AlarmWebhookChannel(new AlarmWebhookConfig { Name = name, Url = url, SecretFile = "unused", TlsPin = pin }, Secret, _time), config, _time,
            _services.GetRequiredService<AlarmDeliveryMetrics>(), NullLogger.Instance);

    private AlarmChannelQueue Started(AlarmChannelQueue queue)
    {
        _loops.Add(Task.Run(() => queue.RunAsync(_stop.Token)));
        return queue;
    }

    private static readonly Alarm Down = new("component/pre-sq/pre-sq-4", "DOWN", "pre-sq pre-sq-4 is DOWN: connection refused",
        new DateTimeOffset(2026, 11, 27, 5, 0, 0, TimeSpan.Zero));

    private AlarmNotice Notice(int i = 0) =>
        AlarmNotice.For(AlarmNoticeState.Raised, Down with { Key = $"component/agent/a{i}" }, _time.GetUtcNow(), "console-test");

    [Fact]
    public async Task A_notice_arrives_as_a_json_document_signed_over_timestamp_and_body()
    {
        var queue = Started(Queue(_receiver.Url, Config()));
        var notice = AlarmNotice.For(AlarmNoticeState.Raised, Down, _time.GetUtcNow(), "console-test");
        queue.Offer(notice);
        var request = (await _receiver.WaitForAsync(1)).Single();

        Assert.Equal("POST", request.Method);
        Assert.Equal("application/json; charset=utf-8", request.Header("Content-Type"));
        Assert.Equal(notice.EventId, request.Header(AlarmWebhookSignature.EventIdHeader));
        Assert.Equal(_time.GetUtcNow().ToUnixTimeSeconds().ToString(System.Globalization.CultureInfo.InvariantCulture), request.Header(AlarmWebhookSignature.TimestampHeader));
        Assert.True(AlarmWebhookSignature.Verify(Secret, request.Header(AlarmWebhookSignature.TimestampHeader), request.Header(AlarmWebhookSignature.SignatureHeader), request.Body));
        // The recipe in docs/console.md, by hand: HMAC-SHA256(secret, timestamp "." body), hex.
        byte[] signed = [.. Encoding.ASCII.GetBytes(request.Header(AlarmWebhookSignature.TimestampHeader) + "."), .. request.Body];
        var expected = System.Security.Cryptography.HMACSHA256.HashData(Encoding.UTF8.GetBytes(Secret), signed);
        Assert.Equal("sha256=" + Convert.ToHexStringLower(expected), request.Header(AlarmWebhookSignature.SignatureHeader));
        // The MAC covers the timestamp and every byte: another timestamp, another secret or one changed byte fail.
        Assert.False(AlarmWebhookSignature.Verify(Secret, "1", request.Header(AlarmWebhookSignature.SignatureHeader), request.Body));
        Assert.False(AlarmWebhookSignature.Verify(Secret + "x", request.Header(AlarmWebhookSignature.TimestampHeader), request.Header(AlarmWebhookSignature.SignatureHeader), request.Body));
        var tampered = request.Body.ToArray();
        tampered[^2] ^= 1;
        Assert.False(AlarmWebhookSignature.Verify(Secret, request.Header(AlarmWebhookSignature.TimestampHeader), request.Header(AlarmWebhookSignature.SignatureHeader), tampered));

        var document = AlarmNoticeDocument.Parse(request.Body)!;
        Assert.Equal((1, notice.EventId, "raised", "component/pre-sq/pre-sq-4", "DOWN", "critical"),
            (document.Version, document.EventId, document.State, document.AlarmKey, document.Kind, document.Severity));
        Assert.Equal(("DOWN: component/pre-sq/pre-sq-4", "pre-sq pre-sq-4 is DOWN: connection refused", "pre-sq-4", "console-test"),
            (document.Title, document.Detail, document.Component, document.Console));
        Assert.Equal((Down.Since, _time.GetUtcNow()), (document.FirstSeen, document.At));
        Assert.Null(document.Acknowledgement);
        using var json = System.Text.Json.JsonDocument.Parse(request.Body);
        Assert.Equal("2026-11-27T05:00:00+00:00", json.RootElement.GetProperty("firstSeen").GetString());
        await Eventually.TrueAsync(() => queue.Sent == 1, "the sent count");
    }

    [Fact]
    public async Task A_receiver_answering_500_gets_exactly_max_attempts_tries_then_the_notice_is_counted_failed()
    {
        _receiver.Status = 500;
        var queue = Started(Queue(_receiver.Url, Config(attempts: 3)));
        var first = Notice(1);
        queue.Offer(first);
        // Time moves only while no try is in flight (every try begun was answered): it releases the back-off, never a time-out.
        await Eventually.TrueAsync(() => queue.Failed == 1, "the notice to be given up", () =>
        {
            if (queue.Attempts == _receiver.Answered)
            {
                _time.Advance(TimeSpan.FromSeconds(10));
            }
        });
        Assert.Equal((3L, 2L, 0L), (queue.Attempts, queue.Retries, queue.Sent));
        var tries = _receiver.Requests.ToArray();
        Assert.Equal(3, tries.Length);
        Assert.All(tries, t => Assert.Equal(first.EventId, t.Header(AlarmWebhookSignature.EventIdHeader)));
        // Each try is signed afresh, over its own timestamp.
        Assert.All(tries, t => Assert.True(AlarmWebhookSignature.Verify(Secret, t.Header(AlarmWebhookSignature.TimestampHeader), t.Header(AlarmWebhookSignature.SignatureHeader), t.Body)));
        Assert.Equal(3, tries.Select(t => t.Header(AlarmWebhookSignature.TimestampHeader)).Distinct().Count());

        // The loop went on to the next notice: the first is not tried a fourth time.
        _receiver.Status = 204;
        var second = Notice(2);
        queue.Offer(second);
        var all = await _receiver.WaitForAsync(4);
        Assert.Equal(second.EventId, all[3].Header(AlarmWebhookSignature.EventIdHeader));
        await Eventually.TrueAsync(() => queue.Sent == 1, "the second notice sent");
        Assert.Equal(4, _receiver.Requests.Count);
    }

    [Fact]
    public async Task A_receiver_answering_400_is_not_tried_again()
    {
        _receiver.Status = 400;
        var queue = Started(Queue(_receiver.Url, Config(attempts: 5)));
        queue.Offer(Notice());
        await Eventually.TrueAsync(() => queue.Failed == 1, "the refused notice");
        Assert.Equal((1L, 0L), (queue.Attempts, queue.Retries));
    }

    [Theory]
    [InlineData(AlarmQueueFullPolicy.DropOldest)]
    [InlineData(AlarmQueueFullPolicy.DropNewest)]
    public async Task A_full_queue_drops_and_counts_and_sends_what_it_kept(AlarmQueueFullPolicy policy)
    {
        var dropped = new List<(long Value, string? Channel)>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == ConsoleMetrics.MeterName && instrument.Name == "sieveq.console.alarm_notices_dropped")
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
        {
            lock (dropped)
            {
                dropped.Add((value, tags.ToArray().Single(t => t.Key == "channel").Value as string));
            }
        });
        listener.Start();

        // Not started yet: nothing drains the queue while it is filled.
        var queue = Queue(_receiver.Url, Config(capacity: 3, full: policy), name: "bounded");
        var notices = Enumerable.Range(0, 10).Select(Notice).ToList();
        foreach (var n in notices)
        {
            queue.Offer(n);
        }
        Assert.Equal((3, 7L), (queue.Depth, queue.DroppedCount));
        lock (dropped)
        {
            Assert.Equal(7, dropped.Count(d => d.Channel == "webhook:bounded" && d.Value == 1));
        }

        Started(queue);
        var received = await _receiver.WaitForAsync(3);
        var kept = policy == AlarmQueueFullPolicy.DropOldest ? notices[7..] : notices[..3];
        Assert.Equal(kept.Select(n => n.EventId), received.Select(r => r.Header(AlarmWebhookSignature.EventIdHeader)));
        await Eventually.TrueAsync(() => queue.Sent == 3, "three sent");
        Assert.Equal(0, queue.Depth);
    }

    [Fact]
    public async Task A_hung_receiver_and_a_refused_connection_hold_up_neither_the_caller_nor_the_other_channel()
    {
        await using var hung = await LoopbackWebhookReceiver.StartAsync();
        hung.Hang = true;
        using var closed = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        closed.Start();
        var closedUrl = $"http://127.0.0.1:{((System.Net.IPEndPoint)closed.LocalEndpoint).Port}/hook";
        closed.Stop();

        var config = Config(capacity: 5);
        var queues = new[] { Queue(hung.Url, config, "hung"), Queue(closedUrl, config, "refused"), Queue(_receiver.Url, config, "working") }.Select(Started).ToList();
        var notices = Enumerable.Range(0, 20).Select(Notice).ToList();
        foreach (var q in queues)
        {
            q.Offer(notices[0]);
        }
        // The hung receiver holds the first try; from here on its channel can only queue.
        await hung.WaitForAsync(1);
        // Offer returns at once whatever the receivers do: 19 more notices, more than any queue holds.
        foreach (var n in notices.Skip(1))
        {
            foreach (var q in queues)
            {
                q.Offer(n);
            }
        }
        var got = await _receiver.WaitForAsync(1);
        await Eventually.TrueAsync(() => queues[2].Sent + queues[2].DroppedCount == 20, "the working channel to be through its queue");
        Assert.Equal(0, queues[2].Failed);
        Assert.Equal(queues[2].Sent, _receiver.Requests.Count);
        Assert.Equal(notices[0].EventId, got[0].Header(AlarmWebhookSignature.EventIdHeader));
        // The hung channel holds one try in flight (no time passes, so it never times out) and its bounded queue drops the rest.
        Assert.Equal((1L, 0L, 0L), (queues[0].Attempts, queues[0].Sent, queues[0].Failed));
        Assert.Equal(5, queues[0].Depth);
        Assert.Equal(14L, queues[0].DroppedCount);
        // The refused one failed its first try and waits in back-off; nothing it does reached the working receiver.
        await Eventually.TrueAsync(() => queues[1].Retries >= 1, "the refused channel's first retry");
        Assert.Equal(0, queues[1].Sent);
    }

    [Fact]
    public async Task An_https_receiver_is_trusted_by_its_pinned_key_and_refused_without_the_pin_or_with_another()
    {
        using var certificate = LoopbackCertificate.Create();
        using var other = LoopbackCertificate.Create();
        await using var https = await LoopbackWebhookReceiver.StartAsync(certificate);
        Assert.StartsWith("https://127.0.0.1:", https.Url, StringComparison.Ordinal);
        var config = Config(attempts: 1);
        var pinned = Started(Queue(https.Url, config, "pinned", Transport.Tls.TlsPin.Of(certificate).ToString()));
        var wrong = Started(Queue(https.Url, config, "wrong-pin", Transport.Tls.TlsPin.Of(other).ToString()));
        var system = Started(Queue(https.Url, config, "system-trust"));
        var notice = Notice();
        foreach (var q in new[] { pinned, wrong, system })
        {
            q.Offer(notice);
        }
        await Eventually.TrueAsync(() => pinned.Sent == 1 && wrong.Failed == 1 && system.Failed == 1, "the three channels' outcomes");
        // Only the pinned channel's request got through the handshake.
        var request = Assert.Single(https.Requests);
        Assert.True(AlarmWebhookSignature.Verify(Secret, request.Header(AlarmWebhookSignature.TimestampHeader), request.Header(AlarmWebhookSignature.SignatureHeader), request.Body));
    }
}
