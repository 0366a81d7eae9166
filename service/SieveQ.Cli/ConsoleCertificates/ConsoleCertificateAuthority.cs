using System.Formats.Asn1;
using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using SieveQ.Transport.Tls;

namespace SieveQ.Cli.ConsoleCertificates;

/// <summary>
/// The certificate authority `sieveq up` makes for its console, one per deployment directory: an ECDSA P-256 key and
/// a self-signed CA certificate that the operator trusts in the browser once, instead of clicking through a warning
/// each time the server certificate is renewed. Name-constrained to localhost, 127.0.0.1 and ::1, so a browser that
/// trusts it cannot be fooled for any other site even if its key leaks.
/// </summary>
internal sealed class ConsoleCertificateAuthority : IDisposable
{
    /// <summary>Five years: it is trusted by hand, so it should change rarely; its key never leaves the deployment folder.</summary>
    public static readonly TimeSpan Validity = TimeSpan.FromDays(5 * 365);

    /// <summary>The server certificate's notBefore lies this far back: a clock slightly behind still accepts a new certificate.</summary>
    public static readonly TimeSpan ClockSkew = TimeSpan.FromHours(1);

    /// <summary>The only names the console is reached by on loopback, and the only names the CA may certify.</summary>
    public static readonly IReadOnlyList<string> LoopbackNames = ["localhost", "127.0.0.1", "::1"];

    private const string NameConstraintsOid = "2.5.29.30";

    private ConsoleCertificateAuthority(X509Certificate2 certificate)
    {
        Certificate = certificate;
    }

    /// <summary>The CA certificate, with its private key.</summary>
    public X509Certificate2 Certificate { get; }

    /// <summary>SHA-256 of the CA certificate, colon-separated as browsers show it.</summary>
    public string Fingerprint => Fingerprints.Sha256(Certificate);

    public static ConsoleCertificateAuthority Create(DateTimeOffset now)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        // A random part in the name: two deployments' CAs (both trusted in one browser) never look like one.
        var subject = new X500DistinguishedName($"CN=SieveQ local console CA {Convert.ToHexString(RandomNumberGenerator.GetBytes(4))}, O=SieveQ up");
        var request = new CertificateRequest(subject, key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(certificateAuthority: true, hasPathLengthConstraint: true, pathLengthConstraint: 0, critical: true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, critical: true));
        request.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(request.PublicKey, critical: false));
        request.CertificateExtensions.Add(LoopbackOnly());
        return new ConsoleCertificateAuthority(request.CreateSelfSigned(now - ClockSkew, now + Validity));
    }

    /// <summary>The CA as written by <see cref="Save"/>.</summary>
    /// <exception cref="CryptographicException">The files are garbled, the key is not the certificate's, or the certificate is no CA.</exception>
    public static ConsoleCertificateAuthority Load(string certificateFile, string keyFile)
    {
        var certificate = X509Certificate2.CreateFromPemFile(certificateFile, keyFile);
        if (certificate.Extensions.OfType<X509BasicConstraintsExtension>().FirstOrDefault() is not { CertificateAuthority: true })
        {
            certificate.Dispose();
            throw new CryptographicException($"{certificateFile} is not a certificate authority");
        }
        return new ConsoleCertificateAuthority(certificate);
    }

    /// <summary>Writes the key (owner-only) first, then the certificate.</summary>
    public void Save(string certificateFile, string keyFile)
    {
        using var key = Certificate.GetECDsaPrivateKey()!;
        OwnerOnlyPemFile.Replace(keyFile, key.ExportPkcs8PrivateKeyPem());
        OwnerOnlyPemFile.Replace(certificateFile, Certificate.ExportCertificatePem() + "\n", ownerOnly: false);
    }

    /// <summary>
    /// A server certificate for <see cref="LoopbackNames"/> with a new key, valid from now for <paramref name="validity"/>
    /// (cut at the CA's own notAfter), for TLS servers only.
    /// </summary>
    public X509Certificate2 IssueServerCertificate(DateTimeOffset now, TimeSpan validity)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = TlsServerCertificate.ServerRequest(key, "localhost", LoopbackNames);
        request.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(request.PublicKey, critical: false));
        request.CertificateExtensions.Add(X509AuthorityKeyIdentifierExtension.CreateFromCertificate(Certificate, includeKeyIdentifier: true, includeIssuerAndSerial: false));
        var notAfter = now + validity;
        var caNotAfter = new DateTimeOffset(Certificate.NotAfter.ToUniversalTime());
        // A serial number that is unique per certificate: browsers refuse two certificates from one issuer with the same one.
        var serial = RandomNumberGenerator.GetBytes(16);
        serial[0] &= 0x7F;
        using var issued = request.Create(Certificate, now - ClockSkew, notAfter < caNotAfter ? notAfter : caNotAfter, serial);
        return issued.CopyWithPrivateKey(key);
    }

    /// <summary>
    /// nameConstraints (RFC 5280 4.2.1.10, critical): permitted subtrees dNSName localhost, iPAddress 127.0.0.1/32 and
    /// ::1/128. .NET has no builder for it, so it is DER-encoded here.
    /// </summary>
    private static X509Extension LoopbackOnly()
    {
        var writer = new AsnWriter(AsnEncodingRules.DER);
        using (writer.PushSequence())
        {
            using (writer.PushSequence(new Asn1Tag(TagClass.ContextSpecific, 0)))
            {
                using (writer.PushSequence())
                {
                    writer.WriteCharacterString(UniversalTagNumber.IA5String, "localhost", new Asn1Tag(TagClass.ContextSpecific, 2));
                }
                foreach (var address in new[] { IPAddress.Loopback, IPAddress.IPv6Loopback })
                {
                    var bytes = address.GetAddressBytes();
                    using (writer.PushSequence())
                    {
                        // The address followed by its mask: all ones, this one address.
                        writer.WriteOctetString([.. bytes, .. Enumerable.Repeat((byte)0xFF, bytes.Length)], new Asn1Tag(TagClass.ContextSpecific, 7));
                    }
                }
            }
        }
        return new X509Extension(NameConstraintsOid, writer.Encode(), critical: true);
    }

    public void Dispose() => Certificate.Dispose();
}
