using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using SieveQ.Transport.Tls;

namespace SieveQ.Cli.ConsoleCertificates;

/// <summary>
/// PEM files of the console's certificates, each replaced whole (written beside, then renamed over): the console
/// re-reads its certificate when the files change and must never read half a file.
/// </summary>
internal static class CertificateFiles
{
    /// <summary>PKCS#8 PEM, owner-only (the repository's one way of writing a private key, <see cref="OwnerOnlyPemFile"/>).</summary>
    public static void WriteKey(string path, ECDsa key) => OwnerOnlyPemFile.Replace(path, key.ExportPkcs8PrivateKeyPem());

    /// <summary>A certificate is public: readable by others, so the operator can hand the CA to a browser or a colleague.</summary>
    public static void WriteCertificate(string path, X509Certificate2 certificate)
    {
        var temporary = path + ".tmp";
        File.WriteAllText(temporary, certificate.ExportCertificatePem() + "\n");
        File.Move(temporary, path, overwrite: true);
    }
}
