using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace SieveQ.Cli.ConsoleCertificates;

/// <summary>Certificate fingerprints as an operator compares them with a browser's certificate viewer.</summary>
internal static class Fingerprints
{
    /// <summary>SHA-256 of the DER certificate, upper-case hex pairs separated by colons.</summary>
    public static string Sha256(X509Certificate2 certificate) =>
        string.Join(':', certificate.GetCertHash(HashAlgorithmName.SHA256).Select(b => b.ToString("X2", System.Globalization.CultureInfo.InvariantCulture)));
}
