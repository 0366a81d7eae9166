using Microsoft.Extensions.DependencyInjection;
using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text.RegularExpressions;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;
using SieveQ.Transport.Tls;

namespace SieveQ.AdminUi.Tests;

/// <summary>
/// The console's listener: https:// with the certificate console.json names (checked at start), http:// on loopback
/// only; HSTS and Secure cookies over TLS. A real console on loopback, reached by an HttpClient that trusts only the
/// configured certificate's key.
/// </summary>
public sealed partial class ConsoleTlsTests : IAsyncLifetime
{
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-console-tls-").FullName;
    private string _adminPassword = "";

    public async Task InitializeAsync()
    {
        (_, var password) = await BareConsoleDeployment.CreateAsync(_dir);
        _adminPassword = password!;
    }

    private void Configure(Func<ConsoleConfig, ConsoleConfig> change)
    {
        // Saved as the file is, so Load's checks run on it.
        var raw = System.Text.Json.JsonSerializer.Deserialize<ConsoleConfig>(File.ReadAllText(ConsoleConfig.PathIn(_dir)), ConsoleConfig.Options)!;
        change(raw).Save(_dir);
    }

    private DeploymentException Refused() => Assert.Throws<DeploymentException>(() => ConsoleWebApp.Build(_dir, ConsoleServeSettings.FromFiles, []));

    [Fact]
    public void Cleartext_off_loopback_https_without_a_certificate_and_http_with_one_are_refused()
    {
        foreach (var url in new[] { "http://10.1.2.3:5080", "http://0.0.0.0:5080", "http://[::]:5080", "https://127.0.0.1:5080", "https://console.example:5080", "http://127.0.0.1:5080/console" })
        {
            Configure(c => c with { Url = url });
            var e = Refused();
            Assert.Contains(url, e.Message, StringComparison.Ordinal);
        }
        foreach (var url in new[] { "http://10.1.2.3:5080", "http://0.0.0.0:5080", "http://[::]:5080" })
        {
            Configure(c => c with { Url = url });
            Assert.Contains("cleartext off loopback", Refused().Message, StringComparison.Ordinal);
        }
        // IPv6 literals are addresses like any other.
        var tls = new ConsoleTlsConfig { CertificateFile = "c.crt", KeyFile = "c.key" };
        Assert.Equal("http://[::1]:5080", new ConsoleConfig { Url = "http://127.0.0.1:1" }.WithUrl("http://[::1]:5080").Url);
        Assert.Equal("https://[::]:5080", new ConsoleConfig { Url = "https://127.0.0.1:1", Tls = tls }.WithUrl("https://[::]:5080").Url);
        Configure(c => c with { Url = "http://127.0.0.1:5080", Tls = new ConsoleTlsConfig { CertificateFile = "c.crt", KeyFile = "c.key" } });
        Assert.Contains("use https://", Refused().Message, StringComparison.Ordinal);
        // `serve --url` is held to the same rule.
        Configure(c => c with { Url = "http://127.0.0.1:5080", Tls = null });
        Assert.Throws<DeploymentException>(() => ConsoleWebApp.Build(_dir, new ConsoleServeSettings("http://192.168.1.1:5080", null, null), []));
        Assert.Throws<DeploymentException>(() => ConsoleWebApp.Build(_dir, new ConsoleServeSettings("https://0.0.0.0:5080", null, null), []));
    }

    [Fact]
    public void Missing_garbled_mismatched_or_keyless_certificate_files_are_refused_at_start_with_the_reason()
    {
        var keys = Path.Combine(_dir, "keys");
        var url = $"https://127.0.0.1:{FreeLoopbackPort()}";
        var tls = new ConsoleTlsConfig { CertificateFile = "keys/c.crt", KeyFile = "keys/c.key" };
        Configure(c => c with { Url = url, Tls = tls });
        Assert.Contains("does not exist", Refused().Message, StringComparison.Ordinal);

        File.WriteAllText(Path.Combine(keys, "c.crt"), "-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n");
        File.WriteAllText(Path.Combine(keys, "c.key"), "garbage");
        Assert.Contains("cannot be loaded", Refused().Message, StringComparison.Ordinal);

        // A certificate with another certificate's key.
        TlsServerCertificate.Create(Path.Combine(keys, "c.crt"), Path.Combine(keys, "unused.key"), "a");
        TlsServerCertificate.Create(Path.Combine(keys, "other.crt"), Path.Combine(keys, "c.key"), "b");
        Assert.Contains("cannot be loaded", Refused().Message, StringComparison.Ordinal);

        // A PKCS#12 without the private key, and one whose password file is wrong.
        using (var key = ECDsa.Create(ECCurve.NamedCurves.nistP256))
        {
            using var certificate = new CertificateRequest("CN=x", key, HashAlgorithmName.SHA256).CreateSelfSigned(DateTimeOffset.UtcNow.AddHours(-1), DateTimeOffset.UtcNow.AddDays(1));
            using var publicOnly = X509CertificateLoader.LoadCertificate(certificate.RawData);
            File.WriteAllBytes(Path.Combine(keys, "public.pfx"), publicOnly.Export(X509ContentType.Pkcs12));
            File.WriteAllBytes(Path.Combine(keys, "locked.pfx"), certificate.Export(X509ContentType.Pkcs12, "right"));
            // Expired: refused though it loads.
            using var old = new CertificateRequest("CN=x", key, HashAlgorithmName.SHA256).CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-10), DateTimeOffset.UtcNow.AddDays(-1));
            File.WriteAllBytes(Path.Combine(keys, "old.pfx"), old.Export(X509ContentType.Pkcs12));
        }
        Configure(c => c with { Tls = new ConsoleTlsConfig { CertificateFile = "keys/public.pfx" } });
        Assert.Contains("no private key", Refused().Message, StringComparison.Ordinal);
        File.WriteAllText(Path.Combine(keys, "pfx-password"), "wrong\n");
        Configure(c => c with { Tls = new ConsoleTlsConfig { CertificateFile = "keys/locked.pfx", PasswordFile = "keys/pfx-password" } });
        Assert.Contains("cannot be loaded", Refused().Message, StringComparison.Ordinal);
        Configure(c => c with { Tls = new ConsoleTlsConfig { CertificateFile = "keys/old.pfx" } });
        Assert.Contains("not now", Refused().Message, StringComparison.Ordinal);
        // A PEM certificate without its key file, a PKCS#12 with one.
        Configure(c => c with { Tls = new ConsoleTlsConfig { CertificateFile = "keys/c.crt" } });
        Assert.Contains("keyFile", Refused().Message, StringComparison.Ordinal);
        Configure(c => c with { Tls = new ConsoleTlsConfig { CertificateFile = "keys/locked.pfx", KeyFile = "keys/c.key" } });
        Assert.Contains("keyFile", Refused().Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task The_console_serves_https_with_the_generated_certificate_hsts_and_secure_cookies()
    {
        var url = $"https://127.0.0.1:{FreeLoopbackPort()}";
        Assert.Throws<DeploymentException>(() => ConsoleTls.CreateCertificate(_dir, url, ["bad name/"]));
        var (config, fingerprint) = ConsoleTls.CreateCertificate(_dir, url, ["console.example"]);
        Assert.Equal(url, ConsoleConfig.Load(_dir).Url);
        using var generated = X509Certificate2.CreateFromPemFile(Path.Combine(_dir, config.Tls!.CertificateFile), Path.Combine(_dir, config.Tls.KeyFile!));
        Assert.Equal(generated.GetCertHashString(HashAlgorithmName.SHA256), fingerprint);
        // The names a browser may be given: --name and the listen address.
        var alternative = generated.Extensions.OfType<X509SubjectAlternativeNameExtension>().Single();
        Assert.Equal(["console.example"], alternative.EnumerateDnsNames());
        Assert.Equal([IPAddress.Loopback], alternative.EnumerateIPAddresses());
        var pin = TlsPin.Of(generated.PublicKey);

        await using var app = ConsoleWebApp.Build(_dir, ConsoleServeSettings.FromFiles, []);
        await app.StartAsync();
        try
        {
            using var http = PinnedClient(pin, out var seen);
            using var health = await http.GetAsync(new Uri($"{url}/healthz"));
            Assert.Equal(HttpStatusCode.OK, health.StatusCode);
            Assert.Single(seen);
            Assert.Equal("max-age=31536000", health.Headers.GetValues("Strict-Transport-Security").Single());

            // A local sign-in over TLS: both cookies are Secure.
            using var login = await http.GetAsync(new Uri($"{url}/account/login"));
            var antiforgeryCookie = login.Headers.GetValues("Set-Cookie").Single(c => c.StartsWith("sieveq-console-af=", StringComparison.Ordinal));
            Assert.Contains("secure", antiforgeryCookie, StringComparison.OrdinalIgnoreCase);
            var token = AntiforgeryField().Match(await login.Content.ReadAsStringAsync()).Groups[1].Value;
            using var form = new FormUrlEncodedContent(new Dictionary<string, string>
            {
                ["username"] = "admin", ["password"] = _adminPassword, ["__RequestVerificationToken"] = token,
            });
            using var signIn = await http.PostAsync(new Uri($"{url}/account/login"), form);
            Assert.Equal(HttpStatusCode.Redirect, signIn.StatusCode);
            var session = signIn.Headers.GetValues("Set-Cookie").Single(c => c.StartsWith("sieveq-console=", StringComparison.Ordinal));
            Assert.Contains("secure", session, StringComparison.OrdinalIgnoreCase);
            Assert.Contains("httponly", session, StringComparison.OrdinalIgnoreCase);

            // Another key is not this console.
            using var other = ECDsa.Create(ECCurve.NamedCurves.nistP256);
            using var stranger = new CertificateRequest("CN=stranger", other, HashAlgorithmName.SHA256).CreateSelfSigned(DateTimeOffset.UtcNow, DateTimeOffset.UtcNow.AddDays(1));
            using var wrong = PinnedClient(TlsPin.Of(stranger.PublicKey), out _);
            await Assert.ThrowsAsync<HttpRequestException>(() => wrong.GetAsync(new Uri($"{url}/healthz")));
        }
        finally
        {
            await app.StopAsync();
        }
    }

    [Fact]
    public async Task A_renewed_certificate_is_served_to_new_connections_without_a_restart_and_a_refused_renewal_keeps_the_current_one()
    {
        var url = $"https://127.0.0.1:{FreeLoopbackPort()}";
        var (config, _) = ConsoleTls.CreateCertificate(_dir, url);
        var certificatePath = Path.Combine(_dir, config.Tls!.CertificateFile);
        var keyPath = Path.Combine(_dir, config.Tls.KeyFile!);
        TlsPin PinOfFiles()
        {
            using var c = X509Certificate2.CreateFromPemFile(certificatePath, keyPath);
            return TlsPin.Of(c.PublicKey);
        }
        var first = PinOfFiles();

        await using var app = ConsoleWebApp.Build(_dir, ConsoleServeSettings.FromFiles, []);
        await app.StartAsync();
        try
        {
            var renewal = app.Services.GetRequiredService<ConsoleCertificateRenewal>();
            var certificate = app.Services.GetRequiredService<ConsoleCertificate>();
            Assert.Equal(CertificateRenewal.Unchanged, renewal.Check());
            using (var http = PinnedClient(first, out _))
            {
                Assert.Equal(HttpStatusCode.OK, (await http.GetAsync(new Uri($"{url}/healthz"))).StatusCode);
            }

            // The files are replaced by a new pair (what a renewal job does): new connections get the new key.
            File.Delete(certificatePath);
            File.Delete(keyPath);
            TlsServerCertificate.Create(certificatePath, keyPath, "sieveq-console", ["127.0.0.1"]);
            var second = PinOfFiles();
            Assert.Equal(CertificateRenewal.Reloaded, renewal.Check());
            Assert.Equal(1, certificate.Reloads);
            using (var http = PinnedClient(second, out var seen))
            {
                Assert.Equal(HttpStatusCode.OK, (await http.GetAsync(new Uri($"{url}/healthz"))).StatusCode);
                Assert.Single(seen);
            }
            using (var old = PinnedClient(first, out _))
            {
                await Assert.ThrowsAsync<HttpRequestException>(() => old.GetAsync(new Uri($"{url}/healthz")));
            }

            // A broken renewal (the certificate overwritten with garbage) is refused once, and the second certificate stays.
            await File.WriteAllTextAsync(certificatePath, "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n");
            Assert.Equal(CertificateRenewal.Refused, renewal.Check());
            Assert.Equal(CertificateRenewal.Unchanged, renewal.Check());
            Assert.Equal(1, certificate.Refusals);
            using (var http = PinnedClient(second, out _))
            {
                Assert.Equal(HttpStatusCode.OK, (await http.GetAsync(new Uri($"{url}/healthz"))).StatusCode);
            }
        }
        finally
        {
            await app.StopAsync();
        }
    }

    [Fact]
    public async Task A_pkcs12_certificate_with_a_password_file_is_served()
    {
        var url = $"https://127.0.0.1:{FreeLoopbackPort()}";
        using var key = RSA.Create(2048);
        var request = new CertificateRequest("CN=console.example", key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.1")], false));
        using var certificate = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddHours(-1), DateTimeOffset.UtcNow.AddDays(30));
        File.WriteAllBytes(Path.Combine(_dir, "console.pfx"), certificate.Export(X509ContentType.Pkcs12, "s3cret-pfx"));
        File.WriteAllText(Path.Combine(_dir, "console.pfx.password"), "s3cret-pfx\n");
        Configure(c => c with { Url = url, Tls = new ConsoleTlsConfig { CertificateFile = "console.pfx", PasswordFile = "console.pfx.password" } });

        await using var app = ConsoleWebApp.Build(_dir, ConsoleServeSettings.FromFiles, []);
        await app.StartAsync();
        try
        {
            using var http = PinnedClient(TlsPin.Of(certificate.PublicKey), out var seen);
            using var response = await http.GetAsync(new Uri($"{url}/"));
            // Not signed in: sent to the login page, over TLS with the configured certificate.
            Assert.Equal(HttpStatusCode.Redirect, response.StatusCode);
            Assert.Single(seen);
        }
        finally
        {
            await app.StopAsync();
        }
    }

    /// <summary>An HttpClient that accepts exactly the server key <paramref name="pin"/> names (no CA, no name), as the deployment's clients do.</summary>
    private static HttpClient PinnedClient(TlsPin pin, out List<string> handshakes)
    {
        var seen = new List<string>();
        handshakes = seen;
        var handler = new HttpClientHandler
        {
            AllowAutoRedirect = false,
            UseCookies = true,
            ServerCertificateCustomValidationCallback = (_, certificate, _, _) =>
            {
                var ok = certificate is not null && pin.Matches(certificate);
                if (ok)
                {
                    lock (seen)
                    {
                        seen.Add(certificate!.Subject);
                    }
                }
                return ok;
            },
        };
        return new HttpClient(handler);
    }

    private static int FreeLoopbackPort()
    {
        using var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        return ((IPEndPoint)probe.LocalEndpoint).Port;
    }

    public Task DisposeAsync()
    {
        Directory.Delete(_dir, recursive: true);
        return Task.CompletedTask;
    }

    [GeneratedRegex("name=\"__RequestVerificationToken\"[^>]*value=\"([^\"]+)\"")]
    private static partial Regex AntiforgeryField();
}
