using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using SieveQ.Deployment;
using SieveQ.Transport.Tls;

namespace SieveQ.Cli.ConsoleCertificates;

/// <summary>What <see cref="LocalConsoleCertificate.Ensure"/> did.</summary>
internal enum LocalCertificateChange
{
    /// <summary>The CA and the server certificate in place are kept.</summary>
    Reused,
    /// <summary>A new server certificate from the CA in place (the old one was near its end, missing or unusable).</summary>
    Renewed,
    /// <summary>A new CA and server certificate: none existed (first `up`), or the CA was near its end (to be trusted again).</summary>
    AuthorityCreated,
}

/// <summary>The files of the console's loopback TLS after <see cref="LocalConsoleCertificate.Ensure"/>.</summary>
internal sealed record LocalCertificateState(LocalCertificateChange Change, string AuthorityFingerprint, DateTimeOffset NotAfter);

/// <summary>
/// The console's certificate under `sieveq up`, in the deployment's key folder: a CA (<see cref="ConsoleCertificateAuthority"/>)
/// made on the first `up` and kept, and a short-lived server certificate for localhost, 127.0.0.1 and ::1 signed by it,
/// renewed by `up` once it is within <see cref="RenewalWindow"/> of its end. The console re-reads the files when they
/// change (every 10 s), so a renewal while `up` runs needs no restart.
/// </summary>
internal sealed record LocalConsoleCertificate(string AuthorityCertificateFile, string AuthorityKeyFile, string CertificateFile, string KeyFile)
{
    /// <summary>90 days, as public CAs issue: a leaked server key is good for weeks, not years.</summary>
    public static readonly TimeSpan Validity = TimeSpan.FromDays(90);

    /// <summary>
    /// Renewed a third of its life before its end: well before the console's own expiry alarm (14 days before
    /// notAfter), so that alarm means "renewal is not happening", not "routine".
    /// </summary>
    public static readonly TimeSpan RenewalWindow = TimeSpan.FromDays(30);

    public static LocalConsoleCertificate In(string keyDirectory) => new(
        Path.Combine(keyDirectory, "console-ca.crt"), Path.Combine(keyDirectory, "console-ca.key"),
        Path.Combine(keyDirectory, "console-localhost.crt"), Path.Combine(keyDirectory, "console-localhost.key"));

    /// <summary>
    /// Makes the CA and the server certificate when missing, renews what is near its end, and keeps the rest.
    /// </summary>
    /// <exception cref="DeploymentException">The CA's files are unusable or its key is readable by others: a CA the
    /// operator may have trusted is never replaced behind their back.</exception>
    public LocalCertificateState Ensure(TimeProvider time)
    {
        ArgumentNullException.ThrowIfNull(time);
        var now = time.GetUtcNow();
        Directory.CreateDirectory(Path.GetDirectoryName(AuthorityKeyFile)!);
        var change = LocalCertificateChange.Reused;
        using var authority = LoadAuthority(now) ?? NewAuthority(now, ref change);
        if (change == LocalCertificateChange.Reused && !ServerCertificateStands(authority.Certificate, now))
        {
            change = LocalCertificateChange.Renewed;
        }
        if (change != LocalCertificateChange.Reused)
        {
            using var server = authority.IssueServerCertificate(now, Validity);
            using var key = server.GetECDsaPrivateKey()!;
            // Key first, then certificate: the console refuses a pair that does not match and takes the next change.
            OwnerOnlyPemFile.Replace(KeyFile, key.ExportPkcs8PrivateKeyPem());
            OwnerOnlyPemFile.Replace(CertificateFile, server.ExportCertificatePem() + "\n", ownerOnly: false);
        }
        using var current = X509CertificateLoader.LoadCertificateFromFile(CertificateFile);
        return new LocalCertificateState(change, authority.Fingerprint, new DateTimeOffset(current.NotAfter.ToUniversalTime()));
    }

    /// <summary>The CA in place; null when there is none yet or it ends before a new server certificate would.</summary>
    private ConsoleCertificateAuthority? LoadAuthority(DateTimeOffset now)
    {
        var haveCertificate = File.Exists(AuthorityCertificateFile);
        if (!haveCertificate && !File.Exists(AuthorityKeyFile))
        {
            return null;
        }
        if (!haveCertificate || !File.Exists(AuthorityKeyFile))
        {
            throw new DeploymentException($"the console's CA is half there ({AuthorityCertificateFile} and {AuthorityKeyFile} go together); delete both to make a new CA (browsers must then trust the new one)");
        }
        if (OwnerOnlyPemFile.IsOpenToOthers(AuthorityKeyFile))
        {
            throw new DeploymentException($"{AuthorityKeyFile} (the console CA's private key) is readable or writable by others; `chmod 600` it if no one else could have read it, else delete both console-ca files to make a new CA");
        }
        ConsoleCertificateAuthority authority;
        try
        {
            authority = ConsoleCertificateAuthority.Load(AuthorityCertificateFile, AuthorityKeyFile);
        }
        catch (Exception e) when (e is CryptographicException or ArgumentException or IOException or UnauthorizedAccessException)
        {
            throw new DeploymentException($"the console's CA {AuthorityCertificateFile} with key {AuthorityKeyFile} cannot be used: {e.Message}; delete both to make a new CA (browsers must then trust the new one)", e);
        }
        if (authority.Certificate.NotAfter.ToUniversalTime() - now.UtcDateTime < Validity)
        {
            // Its server certificates would be cut short at its end; a new CA now, and the operator trusts it again.
            authority.Dispose();
            return null;
        }
        return authority;
    }

    private ConsoleCertificateAuthority NewAuthority(DateTimeOffset now, ref LocalCertificateChange change)
    {
        var authority = ConsoleCertificateAuthority.Create(now);
        authority.Save(AuthorityCertificateFile, AuthorityKeyFile);
        change = LocalCertificateChange.AuthorityCreated;
        return authority;
    }

    /// <summary>
    /// The server certificate in place may be served on: it loads with its key, the key is owner-only, it chains to
    /// <paramref name="authority"/> alone, and it is not within the renewal window. Anything else is replaced, not
    /// refused: the server certificate is `up`'s to make, nobody trusts it directly.
    /// </summary>
    private bool ServerCertificateStands(X509Certificate2 authority, DateTimeOffset now)
    {
        if (!File.Exists(CertificateFile) || !File.Exists(KeyFile) || OwnerOnlyPemFile.IsOpenToOthers(KeyFile))
        {
            return false;
        }
        try
        {
            using var server = X509Certificate2.CreateFromPemFile(CertificateFile, KeyFile);
            return server.HasPrivateKey
                && now.UtcDateTime >= server.NotBefore.ToUniversalTime()
                && server.NotAfter.ToUniversalTime() - now.UtcDateTime > RenewalWindow
                && ChainsTo(server, authority, now);
        }
        catch (Exception e) when (e is CryptographicException or ArgumentException or IOException)
        {
            return false;
        }
    }

    /// <summary>The chain a client that trusts only this CA builds (no system roots, no revocation: there is no CRL).</summary>
    internal static bool ChainsTo(X509Certificate2 server, X509Certificate2 authority, DateTimeOffset at)
    {
        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.CustomTrustStore.Add(authority);
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        chain.ChainPolicy.VerificationTime = at.UtcDateTime;
        chain.ChainPolicy.VerificationTimeIgnored = false;
        return chain.Build(server);
    }
}
