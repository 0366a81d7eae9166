using System.Security.Cryptography.X509Certificates;
using SieveQ.Sieve.Keys;
using SieveQ.Transport.Tls;

namespace SieveQ.Deployment;

/// <summary>
/// The TLS side of a deployment: which URL needs a pin, and where a server component's certificate and key are
/// (<c>presq-N-tls.crt</c> / <c>presq-N-tls.key</c>, <c>replica-sq-N-tls.*</c>, <c>controller-tls.*</c> in the key
/// directory, beside the component's other keys).
/// </summary>
public static class DeploymentTls
{
    /// <summary>The pin of an endpoint: required for https://, refused for http:// (it would not be checked).</summary>
    /// <exception cref="DeploymentException">A malformed URL, a missing or malformed pin, or a pin on a cleartext URL.</exception>
    public static TlsPin? ParsePin(string url, string? pin)
    {
        if (!Uri.TryCreate(url, UriKind.Absolute, out var u) || u.Scheme is not ("http" or "https"))
        {
            throw new DeploymentException($"'{url}' is not an http(s) URL");
        }
        if (u.Scheme == Uri.UriSchemeHttp)
        {
            return pin is null ? null : throw new DeploymentException($"'{url}' is cleartext but has a tlsPin; use https:// for TLS");
        }
        if (pin is null)
        {
            throw new DeploymentException($"'{url}' is https:// but has no tlsPin (base64 SHA-256 of the server's TLS key)");
        }
        try
        {
            return TlsPin.Parse(pin);
        }
        catch (FormatException e)
        {
            throw new DeploymentException($"'{url}': {e.Message}", e);
        }
    }

    public static string FileStem(PartyRole role, int id) => role switch
    {
        PartyRole.PreSq => $"{PartyKeyNames.PreSq}-{id}-tls",
        PartyRole.Replica => $"{PartyKeyNames.Replica}-{id}-tls",
        _ => throw new ArgumentOutOfRangeException(nameof(role), role, "only pre-SQs and replica-SQs serve TLS"),
    };

    /// <summary>Creates a server's TLS key and certificate in <paramref name="keyDirectory"/> and returns its pin (base64).</summary>
    public static string Create(string keyDirectory, string stem, string subjectName)
    {
        Directory.CreateDirectory(keyDirectory);
        return TlsServerCertificate.Create(Path.Combine(keyDirectory, stem + ".crt"), Path.Combine(keyDirectory, stem + ".key"), subjectName).ToString();
    }

    /// <summary>The certificate a server component presents on <paramref name="url"/>; null for http://.</summary>
    /// <exception cref="DeploymentException">The files are missing, garbled, or not the pinned key.</exception>
    public static X509Certificate2? ServerCertificate(string keyDirectory, string stem, string url, TlsPin? pin)
    {
        if (pin is null)
        {
            return null;
        }
        try
        {
            return TlsServerCertificate.Load(Path.Combine(keyDirectory, stem + ".crt"), Path.Combine(keyDirectory, stem + ".key"), pin);
        }
        catch (TlsCertificateException e)
        {
            throw new DeploymentException($"cannot serve {url}: {e.Message}", e);
        }
    }

    public static X509Certificate2? ServerCertificate(DeploymentConfig config, PartyRole role, int id, string url, TlsPin? pin)
    {
        ArgumentNullException.ThrowIfNull(config);
        return ServerCertificate(config.Resolve(config.KeyDirectory), FileStem(role, id), url, pin);
    }
}
