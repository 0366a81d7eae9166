using System.Globalization;
using System.Text;
using MailKit.Net.Smtp;
using MailKit.Security;
using MimeKit;

namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>
/// Sends each notice as a plain-text e-mail through the configured SMTP server (MailKit), one connection per notice:
/// alarms are rare, and a connection kept open would only find a server that timed it out. Message-Id is built from
/// the event id, so a mail system that drops duplicate ids drops a re-sent notice.
/// </summary>
public sealed class AlarmMailChannel(AlarmMailConfig config, string? password) : IAlarmChannel
{
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
            if (config.UserName is { } user)
            {
                // startTlsWhenOffered may have ended in cleartext: the password goes in clear only to a loopback relay.
                if (!smtp.IsSecure && !LoopbackHost.Is(config.Host))
                {
                    throw new AlarmNoticeRefusedException($"{config.Host} offered no STARTTLS; the password is not sent in cleartext");
                }
                await smtp.AuthenticateAsync(user, password ?? "", ct).ConfigureAwait(false);
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
        var state = AlarmNoticeDocument.StateName(notice.State);
        message.Subject = $"[SieveQ {notice.Severity}] {state}: {notice.Title}";
        message.MessageId = $"{notice.EventId}@sieveq.console";
        message.Date = notice.At;
        message.Headers.Add("X-SieveQ-Event-Id", notice.EventId);
        message.Headers.Add("X-SieveQ-Alarm-Key", notice.Alarm.Key);
        message.Headers.Add("X-SieveQ-Alarm-State", state);
        message.Body = new TextPart("plain") { Text = Body(notice, state) };
        return message;
    }

    private static string Body(AlarmNotice notice, string state)
    {
        var a = notice.Alarm;
        var text = new StringBuilder();
        text.AppendLine(a.Message).AppendLine();
        void Line(string name, string? value) => text.Append(CultureInfo.InvariantCulture, $"{name,-13}{value}").AppendLine();
        Line("state:", state);
        Line("severity:", notice.Severity);
        Line("alarm:", a.Key);
        Line("kind:", a.Kind);
        Line("component:", notice.Component ?? "-");
        Line("first seen:", Utc(a.Since));
        Line("at:", Utc(notice.At));
        if (a.Acknowledged is { } ack)
        {
            Line("acknowledged:", $"by {ack.By} at {Utc(ack.At)}: {ack.Reason} (audit record {ack.AuditSequence})");
        }
        Line("console:", notice.Console);
        Line("event id:", notice.EventId);
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
