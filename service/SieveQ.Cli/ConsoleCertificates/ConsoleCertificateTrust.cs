using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace SieveQ.Cli.ConsoleCertificates;

/// <summary>
/// How `up` itself trusts the console it started when it asks it whether it is up: a generated certificate by the
/// deployment's CA alone (not the machine's roots: the CA is trusted nowhere else), the operator's certificate by
/// being exactly that certificate (it may name the host, not 127.0.0.1, and chain to a CA this machine lacks).
/// </summary>
internal static class ConsoleCertificateTrust
{
    /// <summary>A handler that accepts only a server certificate for the URL's name chaining to <paramref name="authority"/>.</summary>
    public static HttpClientHandler ByAuthority(X509Certificate2 authority) => new()
    {
        ServerCertificateCustomValidationCallback = (_, certificate, _, errors) =>
            certificate is not null
            && (errors & (SslPolicyErrors.RemoteCertificateNameMismatch | SslPolicyErrors.RemoteCertificateNotAvailable)) == 0
            && LocalConsoleCertificate.ChainsTo(certificate, authority, DateTimeOffset.UtcNow),
    };

    /// <summary>A handler that accepts only <paramref name="expected"/> itself.</summary>
    public static HttpClientHandler ByCertificate(X509Certificate2 expected) => new()
    {
        ServerCertificateCustomValidationCallback = (_, certificate, _, _) => certificate is not null && certificate.RawDataMemory.Span.SequenceEqual(expected.RawDataMemory.Span),
    };
}
