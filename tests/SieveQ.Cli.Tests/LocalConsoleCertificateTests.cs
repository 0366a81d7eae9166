using System.Formats.Asn1;
using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using SieveQ.Cli.ConsoleCertificates;
using SieveQ.Deployment;

namespace SieveQ.Cli.Tests;

/// <summary>
/// `sieveq up`'s console certificate: a CA and a localhost server certificate made on the first run, kept on the next,
/// renewed within the renewal window, and a CA that may have been trusted never replaced silently when it is unusable.
/// Chains are built here with .NET's X509Chain, trusting the generated CA alone, as a client of the console would.
/// </summary>
public sealed class LocalConsoleCertificateTests : IDisposable
{
    private readonly string _keys = Directory.CreateTempSubdirectory("sieveq-console-tls-").FullName;
    private readonly ConsoleCertificateTime _time = new(new DateTimeOffset(2026, 11, 27, 6, 0, 0, TimeSpan.Zero));

    private LocalConsoleCertificate Files => LocalConsoleCertificate.In(_keys);

    [Fact]
    public void The_first_run_makes_a_CA_and_a_server_certificate_for_loopback_signed_by_it()
    {
        var state = Files.Ensure(_time);

        Assert.Equal(LocalCertificateChange.AuthorityCreated, state.Change);
        using var authority = X509CertificateLoader.LoadCertificateFromFile(Files.AuthorityCertificateFile);
        using var server = X509Certificate2.CreateFromPemFile(Files.CertificateFile, Files.KeyFile);
        Assert.True(server.HasPrivateKey);
        Assert.Equal(state.AuthorityFingerprint.Replace(":", "", StringComparison.Ordinal), authority.GetCertHashString(HashAlgorithmName.SHA256));

        // The CA: P-256, a CA that signs certificates only, no intermediates below it, for loopback names only.
        Assert.Equal(ECCurve.NamedCurves.nistP256.Oid.Value, authority.GetECDsaPublicKey()!.ExportParameters(false).Curve.Oid.Value);
        var constraints = authority.Extensions.OfType<X509BasicConstraintsExtension>().Single();
        Assert.True(constraints.CertificateAuthority && constraints.Critical && constraints.HasPathLengthConstraint && constraints.PathLengthConstraint == 0);
        Assert.Equal(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, authority.Extensions.OfType<X509KeyUsageExtension>().Single().KeyUsages);
        var names = authority.Extensions.Single(e => e.Oid!.Value == "2.5.29.30");
        Assert.True(names.Critical);
        Assert.Equal(["localhost", "127.0.0.1", "::1"], PermittedSubtrees(names.RawData));

        // The server certificate: the three loopback names, serverAuth only, not a CA, 90 days, signed by the CA.
        Assert.Equal(ECCurve.NamedCurves.nistP256.Oid.Value, server.GetECDsaPublicKey()!.ExportParameters(false).Curve.Oid.Value);
        var alternative = server.Extensions.OfType<X509SubjectAlternativeNameExtension>().Single();
        Assert.Equal(["localhost"], alternative.EnumerateDnsNames());
        Assert.Equal([IPAddress.Loopback, IPAddress.IPv6Loopback], alternative.EnumerateIPAddresses());
        Assert.Equal(["1.3.6.1.5.5.7.3.1"], server.Extensions.OfType<X509EnhancedKeyUsageExtension>().Single().EnhancedKeyUsages.Cast<Oid>().Select(o => o.Value));
        Assert.False(server.Extensions.OfType<X509BasicConstraintsExtension>().Single().CertificateAuthority);
        Assert.Equal(authority.SubjectName.RawData, server.IssuerName.RawData);
        Assert.Equal(_time.Now.AddDays(90).UtcDateTime, server.NotAfter.ToUniversalTime(), TimeSpan.FromSeconds(1));
        Assert.True(Chains(server, authority, _time.Now));
        using var stranger = NewAuthority();
        Assert.False(Chains(server, stranger.Certificate, _time.Now));

        // Keys owner-only; certificates readable (the CA goes to a browser).
        if (!OperatingSystem.IsWindows())
        {
            Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(Files.AuthorityKeyFile));
            Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(Files.KeyFile));
            Assert.True(File.GetUnixFileMode(Files.AuthorityCertificateFile).HasFlag(UnixFileMode.OtherRead));
        }
        Assert.Empty(Directory.GetFiles(_keys, "*.tmp"));
    }

    [Fact]
    public void The_next_run_reuses_both()
    {
        var first = Files.Ensure(_time);
        var files = Snapshot();
        _time.Now += TimeSpan.FromDays(59);

        var second = Files.Ensure(_time);

        Assert.Equal(LocalCertificateChange.Reused, second.Change);
        Assert.Equal(first.AuthorityFingerprint, second.AuthorityFingerprint);
        Assert.Equal(first.NotAfter, second.NotAfter);
        Assert.Equal(files, Snapshot());
    }

    [Fact]
    public void Within_30_days_of_its_end_the_server_certificate_is_renewed_by_the_same_CA()
    {
        var first = Files.Ensure(_time);
        var oldKey = File.ReadAllText(Files.KeyFile);
        var oldCa = File.ReadAllText(Files.AuthorityCertificateFile);
        _time.Now = first.NotAfter - TimeSpan.FromDays(29);

        var renewed = Files.Ensure(_time);

        Assert.Equal(LocalCertificateChange.Renewed, renewed.Change);
        Assert.Equal(first.AuthorityFingerprint, renewed.AuthorityFingerprint);
        Assert.Equal(oldCa, File.ReadAllText(Files.AuthorityCertificateFile));
        Assert.NotEqual(oldKey, File.ReadAllText(Files.KeyFile));
        Assert.Equal(_time.Now.AddDays(90), renewed.NotAfter, TimeSpan.FromSeconds(1));
        using var authority = X509CertificateLoader.LoadCertificateFromFile(Files.AuthorityCertificateFile);
        using var server = X509Certificate2.CreateFromPemFile(Files.CertificateFile, Files.KeyFile);
        Assert.True(Chains(server, authority, _time.Now));
        Assert.Equal(LocalCertificateChange.Reused, Files.Ensure(_time).Change);
    }

    [Fact]
    public void A_server_certificate_that_cannot_serve_is_replaced_not_refused()
    {
        if (OperatingSystem.IsWindows())
        {
            return; // file modes are Unix's; on Windows the folder's ACL decides
        }
        Files.Ensure(_time);
        File.WriteAllText(Files.KeyFile, "garbage");
        Assert.Equal(LocalCertificateChange.Renewed, Files.Ensure(_time).Change);

        // Signed by another CA (someone swapped the files): replaced by one from the deployment's CA.
        using (var stranger = NewAuthority())
        using (var foreign = stranger.IssueServerCertificate(_time.Now, TimeSpan.FromDays(90)))
        {
            File.WriteAllText(Files.CertificateFile, foreign.ExportCertificatePem());
            using var key = foreign.GetECDsaPrivateKey()!;
            File.WriteAllText(Files.KeyFile, key.ExportPkcs8PrivateKeyPem());
            File.SetUnixFileMode(Files.KeyFile, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        }
        Assert.Equal(LocalCertificateChange.Renewed, Files.Ensure(_time).Change);

        // A server key others could read is not served on.
        File.SetUnixFileMode(Files.KeyFile, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.OtherRead);
        Assert.Equal(LocalCertificateChange.Renewed, Files.Ensure(_time).Change);
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(Files.KeyFile));
    }

    [Fact]
    public void A_CA_near_its_own_end_is_replaced_and_said_so()
    {
        var first = Files.Ensure(_time);
        using (var authority = X509CertificateLoader.LoadCertificateFromFile(Files.AuthorityCertificateFile))
        {
            _time.Now = authority.NotAfter.ToUniversalTime() - TimeSpan.FromDays(60);
        }

        var second = Files.Ensure(_time);

        Assert.Equal(LocalCertificateChange.AuthorityCreated, second.Change);
        Assert.NotEqual(first.AuthorityFingerprint, second.AuthorityFingerprint);
    }

    [Fact]
    public void An_unusable_CA_is_refused_with_the_file_and_what_to_do()
    {
        if (OperatingSystem.IsWindows())
        {
            return; // file modes are Unix's; on Windows the folder's ACL decides
        }
        Files.Ensure(_time);
        File.SetUnixFileMode(Files.AuthorityKeyFile, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead);
        var e = Assert.Throws<DeploymentException>(() => Files.Ensure(_time));
        Assert.Contains("console-ca.key", e.Message, StringComparison.Ordinal);
        Assert.Contains("readable or writable by others", e.Message, StringComparison.Ordinal);

        File.SetUnixFileMode(Files.AuthorityKeyFile, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        using (var other = ECDsa.Create(ECCurve.NamedCurves.nistP256))
        {
            File.WriteAllText(Files.AuthorityKeyFile, other.ExportPkcs8PrivateKeyPem());
        }
        e = Assert.Throws<DeploymentException>(() => Files.Ensure(_time));
        Assert.Contains("cannot be used", e.Message, StringComparison.Ordinal);

        File.Delete(Files.AuthorityKeyFile);
        e = Assert.Throws<DeploymentException>(() => Files.Ensure(_time));
        Assert.Contains("half there", e.Message, StringComparison.Ordinal);
    }

    private ConsoleCertificateAuthority NewAuthority() => ConsoleCertificateAuthority.Create(_time.Now.AddDays(-1));

    private static bool Chains(X509Certificate2 server, X509Certificate2 authority, DateTimeOffset at)
    {
        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.CustomTrustStore.Add(authority);
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        chain.ChainPolicy.VerificationTime = at.UtcDateTime;
        chain.ChainPolicy.ApplicationPolicy.Add(new Oid("1.3.6.1.5.5.7.3.1"));
        return chain.Build(server) && chain.ChainElements[^1].Certificate.RawData.AsSpan().SequenceEqual(authority.RawData);
    }

    /// <summary>nameConstraints' permitted subtrees as names: a dNSName as is, an iPAddress/mask as the address when the mask is all ones.</summary>
    private static List<string> PermittedSubtrees(byte[] der)
    {
        var names = new List<string>();
        var reader = new AsnReader(der, AsnEncodingRules.DER).ReadSequence();
        var subtrees = reader.ReadSequence(new Asn1Tag(TagClass.ContextSpecific, 0));
        Assert.False(reader.HasData);
        while (subtrees.HasData)
        {
            var subtree = subtrees.ReadSequence();
            var tag = subtree.PeekTag();
            if (tag.HasSameClassAndValue(new Asn1Tag(TagClass.ContextSpecific, 2)))
            {
                names.Add(subtree.ReadCharacterString(UniversalTagNumber.IA5String, tag));
            }
            else
            {
                var bytes = subtree.ReadOctetString(new Asn1Tag(TagClass.ContextSpecific, 7));
                Assert.All(bytes[(bytes.Length / 2)..], b => Assert.Equal(0xFF, b));
                names.Add(new IPAddress(bytes[..(bytes.Length / 2)]).ToString());
            }
        }
        return names;
    }

    private Dictionary<string, string> Snapshot() => Directory.GetFiles(_keys).ToDictionary(f => f, File.ReadAllText);

    public void Dispose() => Directory.Delete(_keys, recursive: true);
}
