using System.Globalization;
using System.Text;
using MailKit.Net.Smtp;
using MailKit.Security;
using MimeKit;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>
/// Sends each notice as a plain-text e-mail through the configured SMTP server (MailKit), one connection per notice:
/// alarms are rare, and a connection kept open would only find a server that timed it out. Message-Id is built from
/// the event id, so a mail system that drops duplicate ids drops a re-sent notice.
/// </summary>
public sealed class AlarmMailChannel(AlarmMailConfig config, string? password) : IAlarmChannel
{
    /// <summary>The AUTH login; the configuration has a password file exactly when it has a user (<see cref="AlarmMailConfig"/>).</summary>
    private readonly (string User, string Password)? _login = config.UserName is { } user
        ? (user, password ?? throw new ArgumentException("an SMTP user needs its password", nameof(password)))
        : null;

    public string Name => "mail";

    public async Task SendAsync(AlarmNotice notice, CancellationToken ct)
    {
        using var message = Compose(notice);
        using var smtp = new SmtpClient();
        if (AlarmTlsTrust.Callback(config.TlsPin) is { } pinned)
        {
            smtp.ServerCertificateValidationCallback = pinned;
        }
        try
        {
            await smtp.ConnectAsync(config.Host, config.Port, Options(config.Security), ct).ConfigureAwait(false);
            if (_login is (var user, var pass))
            {
                // startTlsWhenOffered may have ended in cleartext: the password goes in clear only to a loopback relay.
                if (!smtp.IsSecure && !LoopbackHost.Is(config.Host))
                {
                    throw new AlarmNoticeRefusedException($"{config.Host} offered no STARTTLS; the password is not sent in cleartext");
                }
                await smtp.AuthenticateAsync(user, pass, ct).ConfigureAwait(false);
            }
            await smtp.SendAsync(message, ct).ConfigureAwait(false);
            await smtp.DisconnectAsync(quit: true, ct).ConfigureAwait(false);
        }
        catch (AuthenticationException e)
        {
            throw new AlarmNoticeRefusedException($"{config.Host} refused the login: {e.Message}");
        }
        catch (SmtpCommandException e) when ((int)e.StatusCode >= 500)
        {
            // A permanent SMTP answer (a recipient refused, a message refused): trying again gets the same answer.
            throw new AlarmNoticeRefusedException($"{config.Host} answered {(int)e.StatusCode}: {e.Message}");
        }
    }

    internal MimeMessage Compose(AlarmNotice notice)
    {
        var message = new MimeMessage();
        message.From.Add(MailboxAddress.Parse(config.From));
        foreach (var to in config.To)
        {
            message.To.Add(MailboxAddress.Parse(to));
        }
        // The same fields as a webhook's document, so the two channels cannot tell different stories.
        var d = AlarmNoticeDocument.Of(notice);
        message.Subject = $"[SieveQ {d.Severity}] {d.State}: {d.Title}";
        message.MessageId = $"{d.EventId}@sieveq.console";
        message.Date = notice.At;
        message.Headers.Add(AlarmWebhookSignature.EventIdHeader, d.EventId);
        message.Headers.Add("X-SieveQ-Alarm-Key", d.AlarmKey);
        message.Headers.Add("X-SieveQ-Alarm-State", d.State);
        message.Body = new TextPart("plain") { Text = Body(d) };
        return message;
    }

    private static string Body(AlarmNoticeDocument d)
    {
        var text = new StringBuilder();
        text.AppendLine(d.Detail).AppendLine();
        void Line(string name, string? value) => text.Append(CultureInfo.InvariantCulture, $"{name,-13}{value}").AppendLine();
        Line("state:", d.State);
        Line("severity:", d.Severity);
        Line("alarm:", d.AlarmKey);
        Line("kind:", d.Kind);
        Line("component:", d.Component ?? "-");
        Line("first seen:", Utc(d.FirstSeen));
        Line("at:", Utc(d.At));
        if (d.Acknowledgement is { } ack)
        {
            Line("acknowledged:", $"by {ack.By} at {Utc(ack.At)}: {ack.Reason} (audit record {ack.AuditSequence})");
        }
        Line("console:", d.Console);
        Line("event id:", d.EventId);
        return text.ToString();
    }

    private static string Utc(DateTimeOffset t) => t.UtcDateTime.ToString("yyyy-MM-dd HH:mm:ss", CultureInfo.InvariantCulture) + " UTC";

    private static SecureSocketOptions Options(AlarmMailSecurity security) => security switch
    {
        AlarmMailSecurity.StartTls => SecureSocketOptions.StartTls,
        AlarmMailSecurity.StartTlsWhenOffered => SecureSocketOptions.StartTlsWhenAvailable,
        AlarmMailSecurity.SslOnConnect => SecureSocketOptions.SslOnConnect,
        _ => SecureSocketOptions.None,
    };
}
