using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Time.Testing;
using MimeKit;
using SieveQ.AdminUi.AlarmDelivery;
using SieveQ.AdminUi.Figures;

namespace SieveQ.AdminUi.Tests;

/// <summary>E-mail delivery: a real SMTP conversation (MailKit as the client) with a small SMTP server on loopback.</summary>
public sealed class AlarmMailDeliveryTests : IAsyncLifetime
{
    private readonly FakeTimeProvider _time = new(new DateTimeOffset(2026, 11, 27, 6, 0, 0, TimeSpan.Zero));
    private readonly ServiceProvider _services = new ServiceCollection().AddMetrics().AddSingleton<AlarmDeliveryMetrics>().BuildServiceProvider();
    private readonly CancellationTokenSource _stop = new();
    private readonly LoopbackSmtpServer _smtp = new();
    private Task _loop = Task.CompletedTask;

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        await _stop.CancelAsync();
        await _loop;
        await _smtp.DisposeAsync();
        await _services.DisposeAsync();
        _stop.Dispose();
    }

    private AlarmMailConfig Mail => new()
    {
        Host = "127.0.0.1",
        Port = _smtp.Port,
        Security = AlarmMailSecurity.None,
        From = "SieveQ console <sieveq@example.com>",
        To = ["ops@example.com", "oncall@example.com"],
        UserName = "sieveq-relay",
        PasswordFile = "unused",
    };

    private AlarmChannelQueue Started(AlarmMailConfig mail, int attempts = 3)
    {
        var queue = new AlarmChannelQueue(new AlarmMailChannel(mail, "relay-password"), new AlarmDeliveryConfig { MaxAttempts = attempts, RequestTimeoutSeconds = 300 },
            _time, _services.GetRequiredService<AlarmDeliveryMetrics>(), NullLogger.Instance);
        _loop = Task.Run(() => queue.RunAsync(_stop.Token));
        return queue;
    }

    [Fact]
    public async Task A_notice_is_mailed_to_every_recipient_with_its_headers_and_text_after_AUTH()
    {
        var queue = Started(Mail);
        var alarm = new Alarm("component/pre-sq/pre-sq-4", "DOWN", "pre-sq pre-sq-4 is DOWN: connection refused", new DateTimeOffset(2026, 11, 27, 5, 0, 0, TimeSpan.Zero),
            new AlarmAcknowledgement("olga", new DateTimeOffset(2026, 11, 27, 5, 30, 0, TimeSpan.Zero), "restarting the host", 17));
        var notice = AlarmNotice.For(AlarmNoticeState.Acknowledged, alarm, _time.GetUtcNow(), "console-east");
        queue.Offer(notice);
        await Eventually.TrueAsync(() => queue.Sent == 1, "the mail to be sent");

        var delivery = Assert.Single(_smtp.Deliveries);
        Assert.Equal(("sieveq-relay", "relay-password"), (delivery.AuthUser, delivery.AuthPassword));
        Assert.Equal("<sieveq@example.com>", delivery.MailFrom.Split(' ')[0]);
        Assert.Equal(["<ops@example.com>", "<oncall@example.com>"], delivery.RcptTo.Select(r => r.Split(' ')[0]));
        Assert.Contains("QUIT", _smtp.Commands);

        using var message = await MimeMessage.LoadAsync(new MemoryStream(Encoding.UTF8.GetBytes(delivery.Data)));
        Assert.Equal("[SieveQ critical] acknowledged: DOWN: component/pre-sq/pre-sq-4", message.Subject);
        Assert.Equal("sieveq@example.com", message.From.Mailboxes.Single().Address);
        Assert.Equal(["ops@example.com", "oncall@example.com"], message.To.Mailboxes.Select(m => m.Address));
        Assert.Equal($"{notice.EventId}@sieveq.console", message.MessageId);
        Assert.Equal(notice.EventId, message.Headers["X-SieveQ-Event-Id"]);
        Assert.Equal("component/pre-sq/pre-sq-4", message.Headers["X-SieveQ-Alarm-Key"]);
        Assert.Equal("acknowledged", message.Headers["X-SieveQ-Alarm-State"]);
        Assert.Equal(_time.GetUtcNow(), message.Date);
        var text = message.TextBody;
        Assert.StartsWith("pre-sq pre-sq-4 is DOWN: connection refused", text, StringComparison.Ordinal);
        Assert.Contains("first seen:  2026-11-27 05:00:00 UTC", text, StringComparison.Ordinal);
        Assert.Contains("acknowledged:by olga at 2026-11-27 05:30:00 UTC: restarting the host (audit record 17)", text, StringComparison.Ordinal);
        Assert.Contains("console:     console-east", text, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Without_a_user_no_AUTH_is_sent()
    {
        var queue = Started(Mail with { UserName = null, PasswordFile = null });
        queue.Offer(AlarmNotice.Test("admin", _time.GetUtcNow(), "c"));
        await Eventually.TrueAsync(() => queue.Sent == 1, "the mail to be sent");
        Assert.Null(Assert.Single(_smtp.Deliveries).AuthUser);
        Assert.DoesNotContain(_smtp.Commands, c => c.StartsWith("AUTH", StringComparison.Ordinal));
    }

    [Fact]
    public async Task A_permanent_SMTP_refusal_is_not_tried_again()
    {
        _smtp.RcptReply = "550 5.1.1 no such user";
        var queue = Started(Mail, attempts: 5);
        queue.Offer(AlarmNotice.Test("admin", _time.GetUtcNow(), "c"));
        await Eventually.TrueAsync(() => queue.Failed == 1, "the refused mail");
        Assert.Equal((1L, 0L, 0L), (queue.Attempts, queue.Retries, queue.Sent));
        Assert.Empty(_smtp.Deliveries);
    }

    [Fact]
    public async Task A_server_without_STARTTLS_fails_the_try_when_STARTTLS_is_required()
    {
        var queue = Started(Mail with { Security = AlarmMailSecurity.StartTls }, attempts: 1);
        queue.Offer(AlarmNotice.Test("admin", _time.GetUtcNow(), "c"));
        await Eventually.TrueAsync(() => queue.Failed == 1, "the failed try");
        Assert.Empty(_smtp.Deliveries);
        Assert.DoesNotContain(_smtp.Commands, c => c.StartsWith("AUTH", StringComparison.Ordinal) || c.StartsWith("MAIL", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task STARTTLS_is_used_before_AUTH_with_a_server_trusted_by_its_pin_and_nothing_is_sent_to_another_key(bool rightKey)
    {
        using var certificate = LoopbackCertificate.Create();
        using var other = LoopbackCertificate.Create();
        await using var smtp = new LoopbackSmtpServer(certificate);
        var pin = Transport.Tls.TlsPin.Of(rightKey ? certificate : other).ToString();
        var queue = Started(Mail with { Port = smtp.Port, Security = AlarmMailSecurity.StartTls, TlsPin = pin }, attempts: 1);
        queue.Offer(AlarmNotice.Test("admin", _time.GetUtcNow(), "c"));
        await Eventually.TrueAsync(() => queue.Sent + queue.Failed == 1, "the try's outcome");
        var commands = smtp.Commands.ToList();
        Assert.Contains("STARTTLS", commands);
        if (!rightKey)
        {
            Assert.Equal(1, queue.Failed);
            Assert.DoesNotContain(commands, c => c.StartsWith("AUTH", StringComparison.Ordinal) || c.StartsWith("MAIL", StringComparison.Ordinal));
            Assert.Empty(smtp.Deliveries);
            return;
        }
        Assert.Equal(1, queue.Sent);
        var tls = commands.FindIndex(c => c.StartsWith("(TLS ", StringComparison.Ordinal));
        Assert.True(tls > commands.IndexOf("STARTTLS"));
        // The password went only inside TLS, after a second EHLO.
        Assert.True(commands.FindIndex(c => c.StartsWith("AUTH", StringComparison.Ordinal)) > tls);
        Assert.True(commands.FindLastIndex(c => c.StartsWith("EHLO", StringComparison.Ordinal)) > tls);
        Assert.Equal(("sieveq-relay", "relay-password"), (smtp.Deliveries.Single().AuthUser, smtp.Deliveries.Single().AuthPassword));
    }
}
