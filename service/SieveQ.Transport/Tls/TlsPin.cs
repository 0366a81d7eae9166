using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace SieveQ.Transport.Tls;

/// <summary>
/// What a client trusts a TLS server by: the SHA-256 of the server certificate's DER SubjectPublicKeyInfo,
/// written by the deployment next to the server's URL. No CA and no name check: the deployment says which key
/// each endpoint holds, and pinning the key rather than the certificate lets a server re-issue its certificate
/// without re-enrolment.
/// </summary>
public sealed class TlsPin : IEquatable<TlsPin>
{
    public const int Length = 32;

    private readonly byte[] _hash;

    private TlsPin(byte[] hash)
    {
        _hash = hash;
    }

    public ReadOnlySpan<byte> Hash => _hash;

    public static TlsPin Of(PublicKey key)
    {
        ArgumentNullException.ThrowIfNull(key);
        return new TlsPin(SHA256.HashData(key.ExportSubjectPublicKeyInfo()));
    }

    public static TlsPin Of(X509Certificate certificate)
    {
        ArgumentNullException.ThrowIfNull(certificate);
        if (certificate is X509Certificate2 leaf)
        {
            // Not disposed here: it belongs to the caller (the TLS stack, for a validation callback).
            return Of(leaf.PublicKey);
        }
        using var copy = X509CertificateLoader.LoadCertificate(certificate.GetRawCertData());
        return Of(copy.PublicKey);
    }

    /// <summary>Parses the deployment file's form: standard base64 of the 32-byte hash.</summary>
    /// <exception cref="FormatException">Not base64 of exactly 32 bytes.</exception>
    public static TlsPin Parse(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        var buffer = new byte[Length + 3];
        if (!Convert.TryFromBase64String(text, buffer, out var n) || n != Length)
        {
            throw new FormatException($"'{text}' is not a TLS pin (base64 of the 32-byte SHA-256 of a SubjectPublicKeyInfo)");
        }
        return new TlsPin(buffer[..Length]);
    }

    public bool Matches(X509Certificate certificate)
    {
        var other = Of(certificate);
        return CryptographicOperations.FixedTimeEquals(_hash, other._hash);
    }

    public bool Equals(TlsPin? other) => other is not null && CryptographicOperations.FixedTimeEquals(_hash, other._hash);

    public override bool Equals(object? obj) => Equals(obj as TlsPin);

    public override int GetHashCode() => BitConverter.ToInt32(_hash, 0);

    public override string ToString() => Convert.ToBase64String(_hash);
}
