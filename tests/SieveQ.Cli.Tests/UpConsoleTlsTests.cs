using System.Net.Security;
using System.Reflection;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Text.RegularExpressions;
using SieveQ.Cli.ConsoleCertificates;
using SieveQ.Transport.Tls;

namespace SieveQ.Cli.Tests;

/// <summary>
/// `sieveq up` as a real process, with its console: the console answers on https:// only, with a certificate that a
/// client trusting nothing but the CA `up` printed accepts (and that one trusting another CA, or the machine's roots,
/// refuses), and a certificate renewed in the files while it runs is served without a restart.
/// </summary>
public sealed partial class UpConsoleTlsTests
{
    private static string SieveqDll =>
        typeof(UpConsoleTlsTests).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "SieveqWithConsoleDll").Value!;

    [Fact]
    public async Task The_console_of_up_is_https_with_a_certificate_from_the_printed_CA()
    {
        Assert.True(File.Exists(Path.Combine(Path.GetDirectoryName(SieveqDll)!, "console", "SieveQ.AdminUi.dll")), "the console is not built beside " + SieveqDll);
        var dir = Directory.CreateTempSubdirectory("sieveq-up-tls-").FullName;
        await using var up = UpProcess.Start(["--dir", dir, "--rate", "0", "--duration", "300s"], SieveqDll);
        var passed = false;
        try
        {
            Assert.True(await up.WaitHealthyAsync(), $"sieveq up did not report healthy:\n{up.Text}");
            var text = up.Text;
            var url = new Uri(ConsoleLine().Match(text) is { Success: true } c ? c.Groups[1].Value : throw new InvalidOperationException("no https console line:\n" + text));
            var ca = CaLine().Match(text);
            Assert.True(ca.Success, text);
            Assert.Equal(Path.Combine(dir, "keys", "console-ca.crt"), ca.Groups[1].Value);
            Assert.Contains("new CA: trust it once in your browser", text, StringComparison.Ordinal);
            using var authority = X509CertificateLoader.LoadCertificateFromFile(ca.Groups[1].Value);
            Assert.Equal(Fingerprints.Sha256(authority), ca.Groups[2].Value);

            // Trusting the printed CA alone: accepted, and the console answers.
            X509Certificate2? served = null;
            using (var trusting = Client(authority, seen => served = seen))
            {
                Assert.Equal("ok", await trusting.GetStringAsync(new Uri(url, "/healthz")));
            }
            Assert.NotNull(served);
            Assert.Equal(File.ReadAllText(Path.Combine(dir, "keys", "console-localhost.crt")).Trim(), served.ExportCertificatePem().Trim());

            // Another CA, the machine's roots, cleartext: refused.
            using (var stranger = ConsoleCertificateAuthority.Create(DateTimeOffset.UtcNow))
            using (var wrong = Client(stranger.Certificate, _ => { }))
            {
                var e = await Assert.ThrowsAsync<HttpRequestException>(() => wrong.GetStringAsync(new Uri(url, "/healthz")));
                Assert.IsType<AuthenticationException>(e.InnerException);
            }
            using (var machine = new HttpClient { Timeout = TimeSpan.FromSeconds(10) })
            {
                await Assert.ThrowsAsync<HttpRequestException>(() => machine.GetStringAsync(new Uri(url, "/healthz")));
            }
            using (var clear = new HttpClient { Timeout = TimeSpan.FromSeconds(10) })
            {
                await Assert.ThrowsAsync<HttpRequestException>(() => clear.GetStringAsync(new UriBuilder(url) { Scheme = "http" }.Uri + "healthz"));
            }

            // A renewal written into the files while up runs (as up's hourly look does) is served within the console's 10 s look.
            var files = LocalConsoleCertificate.In(Path.Combine(dir, "keys"));
            using (var loaded = ConsoleCertificateAuthority.Load(files.AuthorityCertificateFile, files.AuthorityKeyFile))
            using (var renewed = loaded.IssueServerCertificate(DateTimeOffset.UtcNow, TimeSpan.FromDays(90)))
            using (var key = renewed.GetECDsaPrivateKey()!)
            {
                OwnerOnlyPemFile.Replace(files.KeyFile, key.ExportPkcs8PrivateKeyPem());
                OwnerOnlyPemFile.Replace(files.CertificateFile, renewed.ExportCertificatePem() + "\n", ownerOnly: false);
                var deadline = DateTime.UtcNow.AddSeconds(40);
                var now = "";
                while (DateTime.UtcNow < deadline)
                {
                    // A new connection each time: a connection already open keeps its certificate.
                    using var again = Client(authority, seen => now = seen.Thumbprint);
                    Assert.Equal("ok", await again.GetStringAsync(new Uri(url, "/healthz")));
                    if (now == renewed.Thumbprint)
                    {
                        break;
                    }
                    await Task.Delay(1000);
                }
                Assert.Equal(renewed.Thumbprint, now);
            }
            passed = true;
        }
        finally
        {
            await up.StopAsync();
            if (passed)
            {
                Directory.Delete(dir, recursive: true);
            }
        }
    }

    /// <summary>A client that trusts <paramref name="authority"/> alone, and checks the name, as a browser given that CA would.</summary>
    private static HttpClient Client(X509Certificate2 authority, Action<X509Certificate2> seen) => new(new SocketsHttpHandler
    {
        SslOptions = new SslClientAuthenticationOptions
        {
            CertificateChainPolicy = new X509ChainPolicy
            {
                TrustMode = X509ChainTrustMode.CustomRootTrust,
                CustomTrustStore = { authority },
                RevocationMode = X509RevocationMode.NoCheck,
            },
            RemoteCertificateValidationCallback = (_, certificate, _, errors) =>
            {
                if (certificate is not null)
                {
                    seen(X509CertificateLoader.LoadCertificate(certificate.GetRawCertData()));
                }
                return errors == SslPolicyErrors.None;
            },
        },
        PooledConnectionLifetime = TimeSpan.Zero,
    })
    { Timeout = TimeSpan.FromSeconds(10) };

    [GeneratedRegex(@"^\s+console\s+(https://\S+)\s*$", RegexOptions.Multiline)]
    private static partial Regex ConsoleLine();

    [GeneratedRegex(@"^\s+console CA\s+(\S+)\s+SHA-256 ([0-9A-F:]{95})\s*$", RegexOptions.Multiline)]
    private static partial Regex CaLine();
}
