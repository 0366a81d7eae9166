using System.Net.Security;
using SieveQ.Transport.Tls;

namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>
/// How a channel trusts its server's TLS certificate: the system's CAs and the host name (the default), or, with a
/// <c>tlsPin</c>, the server's key alone, as the deployment trusts its own components (<see cref="TlsPin"/>).
/// </summary>
internal static class AlarmTlsTrust
{
    public static void Check(string pin, string where, Action<string> refuse)
    {
        try
        {
            TlsPin.Parse(pin);
        }
        catch (FormatException)
        {
            refuse($"{where}: tlsPin '{pin}' is not base64 of the 32-byte SHA-256 of a SubjectPublicKeyInfo");
        }
    }

    /// <summary>The validation callback for a pinned server, or null for the default (system CAs and name).</summary>
    public static RemoteCertificateValidationCallback? Callback(string? pin)
    {
        if (pin is null)
        {
            return null;
        }
        var expected = TlsPin.Parse(pin);
        return (_, certificate, _, _) => certificate is not null && expected.Matches(certificate);
    }
}
