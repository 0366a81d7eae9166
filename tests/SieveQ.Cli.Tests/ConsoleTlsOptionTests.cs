using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using SieveQ.Cli.ConsoleCertificates;
using SieveQ.Deployment;

namespace SieveQ.Cli.Tests;

/// <summary>
/// `up --console-tls auto|off` and `--console-cert/--console-key`: contradictions and malformed values are refused
/// with what is wrong, before anything is created or started.
/// </summary>
public sealed class ConsoleTlsOptionTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-console-tls-option-").FullName;

    [Fact]
    public void Auto_is_the_default_and_off_and_files_are_the_alternatives()
    {
        Assert.IsType<ConsoleTlsChoice.Auto>(ConsoleTlsChoice.Parse(null, null, null).Choice);
        Assert.IsType<ConsoleTlsChoice.Auto>(ConsoleTlsChoice.Parse("auto", null, null).Choice);
        Assert.IsType<ConsoleTlsChoice.Off>(ConsoleTlsChoice.Parse("off", null, null).Choice);
        var provided = Assert.IsType<ConsoleTlsChoice.Provided>(ConsoleTlsChoice.Parse(null, "c.pem", "k.pem").Choice);
        Assert.Equal(Path.GetFullPath("c.pem"), provided.CertificateFile);
        Assert.Equal(Path.GetFullPath("k.pem"), provided.KeyFile);
    }

    [Theory]
    [InlineData("on", null, null, "--console-tls 'on': expected auto")]
    [InlineData("", null, null, "--console-tls '': expected auto")]
    [InlineData(null, "c.pem", null, "--console-cert and --console-key go together")]
    [InlineData(null, null, "k.pem", "--console-cert and --console-key go together")]
    [InlineData("off", "c.pem", "k.pem", "--console-tls off and --console-cert/--console-key contradict")]
    [InlineData("auto", "c.pem", "k.pem", "--console-tls auto and --console-cert/--console-key contradict")]
    public void Contradictions_and_unknown_modes_are_refused(string? mode, string? certificate, string? key, string error)
    {
        var (choice, message) = ConsoleTlsChoice.Parse(mode, certificate, key);
        Assert.Null(choice);
        Assert.StartsWith(error, message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_good_certificate_passes()
    {
        var (certificate, key) = Write("good", DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(30));
        using var loaded = ProvidedConsoleCertificate.Check(certificate, key, DateTimeOffset.UtcNow);
        Assert.True(loaded.HasPrivateKey);
    }

    [Fact]
    public void A_missing_or_garbled_file_is_named()
    {
        var (certificate, key) = Write("good", DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(30));
        var missing = Path.Combine(_dir, "missing.pem");
        Assert.Equal($"--console-cert {missing}: no such file", Refusal(missing, key));
        Assert.Equal($"--console-key {missing}: no such file", Refusal(certificate, missing));
        var garbled = Path.Combine(_dir, "garbled.pem");
        File.WriteAllText(garbled, "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n");
        Assert.StartsWith($"--console-cert {garbled}: not a PEM or DER certificate", Refusal(garbled, key), StringComparison.Ordinal);
        File.WriteAllText(garbled, "");
        Assert.StartsWith($"--console-cert {garbled}: empty", Refusal(garbled, key), StringComparison.Ordinal);
    }

    [Fact]
    public void A_key_that_is_not_the_certificate_s_is_refused()
    {
        var (certificate, _) = Write("one", DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(30));
        var (_, otherKey) = Write("two", DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(30));
        Assert.StartsWith($"--console-key {otherKey}: not the PEM private key of the certificate in {certificate}", Refusal(certificate, otherKey), StringComparison.Ordinal);
    }

    [Fact]
    public void An_expired_or_not_yet_valid_certificate_is_refused()
    {
        var (expired, expiredKey) = Write("expired", DateTimeOffset.UtcNow.AddDays(-90), DateTimeOffset.UtcNow.AddDays(-1));
        Assert.Matches(@"^--console-cert .*expired\.crt: valid from .* to .*, not now$", Refusal(expired, expiredKey));
        var (future, futureKey) = Write("future", DateTimeOffset.UtcNow.AddDays(1), DateTimeOffset.UtcNow.AddDays(90));
        Assert.EndsWith(", not now", Refusal(future, futureKey), StringComparison.Ordinal);
    }

    [Fact]
    public void A_certificate_not_for_TLS_servers_is_refused()
    {
        var (certificate, key) = Write("client", DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(30), usage: "1.3.6.1.5.5.7.3.2");
        Assert.EndsWith("not for TLS servers (its extended key usage lacks serverAuth)", Refusal(certificate, key), StringComparison.Ordinal);
    }

    /// <summary>The real command: a usage error exits 2, an unusable file 1, both before a deployment is created.</summary>
    [Fact]
    public async Task Up_refuses_them_before_creating_anything()
    {
        var deployment = Path.Combine(_dir, "deployment");
        var (code, _, stderr) = await SieveqProcess.RunAsync(["up", "--dir", deployment, "--console-tls", "yes", "--duration", "1s"]);
        Assert.Equal(2, code);
        Assert.Contains("error: --console-tls 'yes': expected auto", stderr, StringComparison.Ordinal);
        var (expired, expiredKey) = Write("expired", DateTimeOffset.UtcNow.AddDays(-90), DateTimeOffset.UtcNow.AddDays(-1));
        (code, _, stderr) = await SieveqProcess.RunAsync(["up", "--dir", deployment, "--console-cert", expired, "--console-key", expiredKey, "--duration", "1s"]);
        Assert.Equal(1, code);
        Assert.Contains("not now", stderr, StringComparison.Ordinal);
        Assert.False(Directory.Exists(deployment));
    }

    private static string Refusal(string certificate, string key) =>
        Assert.Throws<DeploymentException>(() => ProvidedConsoleCertificate.Check(certificate, key, DateTimeOffset.UtcNow).Dispose()).Message;

    /// <summary>A self-signed P-256 certificate and its key as an operator would bring them.</summary>
    private (string Certificate, string Key) Write(string name, DateTimeOffset notBefore, DateTimeOffset notAfter, string usage = "1.3.6.1.5.5.7.3.1")
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest($"CN={name}", key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid(usage)], false));
        using var certificate = request.CreateSelfSigned(notBefore, notAfter);
        var certificateFile = Path.Combine(_dir, name + ".crt");
        var keyFile = Path.Combine(_dir, name + ".key");
        File.WriteAllText(certificateFile, certificate.ExportCertificatePem());
        File.WriteAllText(keyFile, key.ExportPkcs8PrivateKeyPem());
        return (certificateFile, keyFile);
    }

    public void Dispose() => Directory.Delete(_dir, recursive: true);
}
