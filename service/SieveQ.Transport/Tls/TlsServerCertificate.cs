using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace SieveQ.Transport.Tls;

/// <summary>
/// A server's TLS identity on disk: a self-signed ECDSA P-256 certificate (PEM) and its private key (PKCS#8 PEM,
/// owner-only), created by the deployment next to the component's other keys. Clients trust it by its
/// <see cref="TlsPin"/>, so the certificate carries no CA and no meaningful name.
/// </summary>
public static class TlsServerCertificate
{
    /// <summary>Long, because nothing checks it: clients pin the key and ignore the chain and its dates.</summary>
    private static readonly TimeSpan Validity = TimeSpan.FromDays(3650);

    /// <summary>The extended key usage serverAuth (RFC 5280 4.2.1.12): a certificate for TLS servers.</summary>
    public const string ServerAuthenticationOid = "1.3.6.1.5.5.7.3.1";

    /// <summary>Creates a new key and certificate at the two paths (replacing what is there) and returns the key's pin.</summary>
    public static TlsPin Create(string certificatePath, string keyPath, string subjectName) => Create(certificatePath, keyPath, subjectName, []);

    /// <summary>
    /// As <see cref="Create(string, string, string)"/>, naming <paramref name="alternativeNames"/> (DNS names or IP
    /// addresses) in a subjectAlternativeName extension: a browser, once told to trust the certificate, also needs the
    /// name it was given to be one of these.
    /// </summary>
    public static TlsPin Create(string certificatePath, string keyPath, string subjectName, IReadOnlyCollection<string> alternativeNames)
    {
        ArgumentException.ThrowIfNullOrEmpty(certificatePath);
        ArgumentException.ThrowIfNullOrEmpty(keyPath);
        ArgumentNullException.ThrowIfNull(alternativeNames);
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        using var certificate = SelfSigned(key, subjectName, alternativeNames);
        OwnerOnlyPemFile.Write(keyPath, key.ExportPkcs8PrivateKeyPem());
        File.WriteAllText(certificatePath, certificate.ExportCertificatePem());
        return TlsPin.Of(certificate.PublicKey);
    }

    /// <summary>A new key and certificate that live only in memory (a server that nobody needs to find again, e.g. a benchmark's baseline).</summary>
    public static X509Certificate2 CreateEphemeral(string subjectName)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        using var certificate = SelfSigned(key, subjectName);
        // Schannel needs a stored key; the PKCS#12 round trip gives one everywhere.
        return X509CertificateLoader.LoadPkcs12(certificate.Export(X509ContentType.Pkcs12), null);
    }

    private static X509Certificate2 SelfSigned(ECDsa key, string subjectName, IReadOnlyCollection<string>? alternativeNames = null)
    {
        var request = ServerRequest(key, subjectName, alternativeNames ?? []);
        var now = DateTimeOffset.UtcNow;
        return request.CreateSelfSigned(now.AddHours(-1), now.Add(Validity));
    }

    /// <summary>
    /// A request for a TLS server's certificate: subject <c>CN=<paramref name="subjectName"/></c>,
    /// <paramref name="alternativeNames"/> (DNS names or IP addresses; no extension when empty), no CA, digitalSignature,
    /// serverAuth. The caller adds what its issuer needs and signs it.
    /// </summary>
    public static CertificateRequest ServerRequest(ECDsa key, string subjectName, IReadOnlyCollection<string> alternativeNames)
    {
        ArgumentNullException.ThrowIfNull(key);
        ArgumentNullException.ThrowIfNull(alternativeNames);
        var request = new CertificateRequest(new X500DistinguishedName($"CN={subjectName}"), key, HashAlgorithmName.SHA256);
        if (alternativeNames.Count > 0)
        {
            var names = new SubjectAlternativeNameBuilder();
            foreach (var name in alternativeNames)
            {
                if (System.Net.IPAddress.TryParse(name, out var address))
                {
                    names.AddIpAddress(address);
                }
                else
                {
                    names.AddDnsName(name);
                }
            }
            request.CertificateExtensions.Add(names.Build());
        }
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature, true));
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid(ServerAuthenticationOid)], false));
        return request;
    }

    /// <summary>
    /// Loads the certificate and key a server presents, refusing at start what a client would refuse later:
    /// missing or garbled files, a key that is not the certificate's, a key that is not ECDSA P-256, a
    /// certificate that is not the one the deployment pins.
    /// </summary>
    /// <exception cref="TlsCertificateException">With the file and the reason.</exception>
    public static X509Certificate2 Load(string certificatePath, string keyPath, TlsPin expected)
    {
        ArgumentNullException.ThrowIfNull(expected);
        foreach (var path in new[] { certificatePath, keyPath })
        {
            if (!File.Exists(path))
            {
                throw new TlsCertificateException($"TLS certificate or key file {path} does not exist");
            }
        }
        X509Certificate2 loaded;
        try
        {
            loaded = X509Certificate2.CreateFromPemFile(certificatePath, keyPath);
        }
        catch (Exception e) when (e is CryptographicException or ArgumentException)
        {
            throw new TlsCertificateException($"TLS certificate {certificatePath} with key {keyPath} cannot be loaded: {e.Message}", e);
        }
        try
        {
            using (var publicKey = loaded.GetECDsaPublicKey())
            {
                if (publicKey is null || publicKey.KeySize != 256 || publicKey.ExportParameters(false).Curve.Oid.Value != ECCurve.NamedCurves.nistP256.Oid.Value)
                {
                    throw new TlsCertificateException($"TLS certificate {certificatePath}: the key must be ECDSA P-256");
                }
            }
            if (!loaded.HasPrivateKey)
            {
                throw new TlsCertificateException($"TLS key {keyPath} holds no private key for {certificatePath}");
            }
            var pin = TlsPin.Of(loaded.PublicKey);
            if (!pin.Equals(expected))
            {
                throw new TlsCertificateException($"TLS certificate {certificatePath} has key pin {pin}, but the deployment pins {expected} for this component");
            }
            if (!OperatingSystem.IsWindows())
            {
                return loaded;
            }
            // Schannel cannot use the ephemeral key of a PEM import; a PKCS#12 round trip gives it a stored one.
            using (loaded)
            {
                return X509CertificateLoader.LoadPkcs12(loaded.Export(X509ContentType.Pkcs12), null);
            }
        }
        catch
        {
            loaded.Dispose();
            throw;
        }
    }
}

/// <summary>A server's TLS certificate or key cannot be used.</summary>
public sealed class TlsCertificateException : Exception
{
    public TlsCertificateException()
    {
    }

    public TlsCertificateException(string message)
        : base(message)
    {
    }

    public TlsCertificateException(string message, Exception inner)
        : base(message, inner)
    {
    }
}
