using MimeKit;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>How the mail channel protects its SMTP connection.</summary>
public enum AlarmMailSecurity
{
    /// <summary>STARTTLS, and a server that does not offer it is a failed try: the default.</summary>
    StartTls,
    /// <summary>STARTTLS when the server offers it, else cleartext (never with a password off loopback).</summary>
    StartTlsWhenOffered,
    /// <summary>TLS from the first byte (port 465).</summary>
    SslOnConnect,
    /// <summary>Cleartext: only to a relay on loopback.</summary>
    None,
}

/// <summary>
/// <c>alarmDelivery.mail</c>: notices as e-mail through an SMTP server (MailKit), to <see cref="To"/>. The server's
/// certificate is checked against the system's trust store; AUTH is used when <see cref="UserName"/> is set, with the
/// password from <see cref="PasswordFile"/>.
/// </summary>
public sealed record AlarmMailConfig
{
    public const int MaxRecipients = 32;

    public required string Host { get; init; }
    public int Port { get; init; } = 587;
    public AlarmMailSecurity Security { get; init; } = AlarmMailSecurity.StartTls;
    public required string From { get; init; }
    public required IReadOnlyList<string> To { get; init; }
    /// <summary>SMTP AUTH user; none: no AUTH.</summary>
    public string? UserName { get; init; }
    /// <summary>Optional: trust the server by its key pin (as <see cref="AlarmWebhookConfig.TlsPin"/>) instead of the system's CAs.</summary>
    public string? TlsPin { get; init; }
    /// <summary>The SMTP password (one line, owner-only), relative to the deployment directory; required with <see cref="UserName"/>.</summary>
    public string? PasswordFile { get; init; }

    internal void Check(Action<string> refuse)
    {
        if (!ConfigText.IsText(Host, 253) || Uri.CheckHostName(Host.Trim('[', ']')) == UriHostNameType.Unknown)
        {
            refuse($"mail: host '{Host}' is not a host name or address");
        }
        if (Port is < 1 or > 65535)
        {
            refuse("mail: port must be 1 to 65535");
        }
        if (!Enum.IsDefined(Security))
        {
            refuse("mail: security must be startTls, startTlsWhenOffered, sslOnConnect or none");
        }
        if (Security == AlarmMailSecurity.None && !LoopbackHost.Is(Host))
        {
            refuse($"mail: security none (cleartext) is allowed only to a loopback host, not '{Host}'");
        }
        if (TlsPin is not null)
        {
            if (Security == AlarmMailSecurity.None)
            {
                refuse("mail: tlsPin needs a security other than none");
            }
            AlarmTlsTrust.Check(TlsPin, "mail", refuse);
        }
        if (!IsAddress(From))
        {
            refuse($"mail: from '{From}' is not an e-mail address");
        }
        if (To is null || To.Count is 0 or > MaxRecipients)
        {
            refuse($"mail: to must list 1 to {MaxRecipients} addresses");
        }
        foreach (var to in To!.Where(t => !IsAddress(t)))
        {
            refuse($"mail: to '{to}' is not an e-mail address");
        }
        if (UserName is not null != PasswordFile is not null)
        {
            refuse("mail: userName and passwordFile go together (AUTH), or neither");
        }
        if (UserName is not null && !ConfigText.IsText(UserName, 256))
        {
            refuse("mail: userName must be 1 to 256 characters without control characters");
        }
    }

    /// <summary>One mailbox with a local part and a domain: no group, no list, no display-name tricks with control characters.</summary>
    internal static bool IsAddress(string? text) =>
        ConfigText.IsText(text, 254) && MailboxAddress.TryParse(text, out var box)
        && box.Address.IndexOf('@', StringComparison.Ordinal) is > 0 and var at && at < box.Address.Length - 1;
}
