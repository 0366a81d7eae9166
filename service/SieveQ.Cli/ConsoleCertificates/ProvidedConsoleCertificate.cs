using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using SieveQ.Deployment;
using SieveQ.Transport.Tls;

namespace SieveQ.Cli.ConsoleCertificates;

/// <summary>
/// The operator's own certificate for `up`'s console (<c>--console-cert</c>, <c>--console-key</c>), checked before
/// anything starts so a wrong file is named with its reason instead of a console that stops or a browser that fails.
/// The console checks the same again at its start and on each renewal.
/// </summary>
internal static class ProvidedConsoleCertificate
{
    private const long MaxFileBytes = 1024 * 1024;

    /// <summary>The certificate (with its key) when it can serve the console now.</summary>
    /// <exception cref="DeploymentException">A missing or garbled file, a key that is not the certificate's, a certificate
    /// not valid now or not for TLS servers.</exception>
    public static X509Certificate2 Check(string certificateFile, string keyFile, DateTimeOffset now)
    {
        Exists(certificateFile, "--console-cert");
        Exists(keyFile, "--console-key");
        X509Certificate2 certificate;
        try
        {
            // The certificate alone first, so a failure with the key is reported as the key's.
            X509CertificateLoader.LoadCertificateFromFile(certificateFile).Dispose();
        }
        catch (CryptographicException e)
        {
            throw new DeploymentException($"--console-cert {certificateFile}: not a PEM or DER certificate ({e.Message})", e);
        }
        try
        {
            certificate = X509Certificate2.CreateFromPemFile(certificateFile, keyFile);
        }
        catch (Exception e) when (e is CryptographicException or ArgumentException)
        {
            throw new DeploymentException($"--console-key {keyFile}: not the PEM private key of the certificate in {certificateFile} ({e.Message})", e);
        }
        try
        {
            if (!certificate.HasPrivateKey)
            {
                throw new DeploymentException($"--console-key {keyFile}: holds no private key for {certificateFile}");
            }
            if (now.UtcDateTime < certificate.NotBefore.ToUniversalTime() || now.UtcDateTime > certificate.NotAfter.ToUniversalTime())
            {
                throw new DeploymentException($"--console-cert {certificateFile}: valid from {certificate.NotBefore.ToUniversalTime():u} to {certificate.NotAfter.ToUniversalTime():u}, not now");
            }
            var usage = certificate.Extensions.OfType<X509EnhancedKeyUsageExtension>().FirstOrDefault();
            if (usage is not null && !usage.EnhancedKeyUsages.Cast<Oid>().Any(o => o.Value == TlsServerCertificate.ServerAuthenticationOid))
            {
                throw new DeploymentException($"--console-cert {certificateFile}: not for TLS servers (its extended key usage lacks serverAuth)");
            }
            return certificate;
        }
        catch
        {
            certificate.Dispose();
            throw;
        }
    }

    private static void Exists(string path, string option)
    {
        var file = new FileInfo(path);
        if (!file.Exists)
        {
            throw new DeploymentException($"{option} {path}: no such file");
        }
        if (file.Length is 0 or > MaxFileBytes)
        {
            throw new DeploymentException($"{option} {path}: empty or larger than {MaxFileBytes} bytes");
        }
    }
}
