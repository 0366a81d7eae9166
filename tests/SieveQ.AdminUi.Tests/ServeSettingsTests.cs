using System.Net;
using System.Net.Sockets;
using SieveQ.AdminUi.Hosting;
using SieveQ.Controller;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Tests;

/// <summary>
/// `serve --url --controller --controller-pin`: what the installed Windows service passes from the installer's settings
/// instead of console.json's and controller.json's values.
/// </summary>
public sealed class ServeSettingsTests : IAsyncLifetime
{
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-console-serve-").FullName;

    public async Task InitializeAsync()
    {
        await BareConsoleDeployment.CreateAsync(_dir);
    }

    [Fact]
    public async Task The_console_listens_on_the_url_given_instead_of_console_json_s()
    {
        var port = FreeLoopbackPort();
        Assert.NotEqual(new Uri(ConsoleConfig.Load(_dir).Url).Port, port);
        await using var app = ConsoleWebApp.Build(_dir, new ConsoleServeSettings($"http://127.0.0.1:{port}", null, null), []);
        await app.StartAsync();
        try
        {
            using var http = new HttpClient(new HttpClientHandler { AllowAutoRedirect = false });
            using var response = await http.GetAsync(new Uri($"http://127.0.0.1:{port}/"));
            // Not signed in: the console sends the browser to its login page.
            Assert.Equal(HttpStatusCode.Redirect, response.StatusCode);
        }
        finally
        {
            await app.StopAsync();
        }
    }

    [Fact]
    public async Task The_controller_given_is_used_instead_of_controller_json()
    {
        File.Delete(ControllerConfig.PathIn(_dir));
        Assert.Throws<DeploymentException>(() => ConsoleWebApp.Build(_dir, ConsoleServeSettings.FromFiles, []));
        await using var app = ConsoleWebApp.Build(_dir, new ConsoleServeSettings(null, "http://127.0.0.1:9", null), []);
        Assert.NotNull(app);
    }

    [Fact]
    public void An_https_controller_without_its_pin_and_a_listen_url_off_loopback_are_refused()
    {
        var e = Assert.Throws<DeploymentException>(() => ConsoleWebApp.Build(_dir, new ConsoleServeSettings(null, "https://127.0.0.1:9", null), []));
        Assert.StartsWith("--controller:", e.Message, StringComparison.Ordinal);
        Assert.Throws<DeploymentException>(() => ConsoleWebApp.Build(_dir, new ConsoleServeSettings("http://10.1.2.3:5080", null, null), []));
        Assert.Throws<DeploymentException>(() => ConsoleWebApp.Build(_dir, new ConsoleServeSettings("https://127.0.0.1:5080", null, null), []));
    }

    /// <summary>`serve --url https://... --tls-certificate --tls-key`: how `sieveq up` gives the console its certificate, console.json untouched.</summary>
    [Fact]
    public async Task The_certificate_given_is_served_instead_of_console_json_s_http()
    {
        var before = await File.ReadAllTextAsync(ConsoleConfig.PathIn(_dir));
        var certificate = Path.Combine(_dir, "given.crt");
        var key = Path.Combine(_dir, "given.key");
        var pin = SieveQ.Transport.Tls.TlsServerCertificate.Create(certificate, key, "given", ["127.0.0.1"]);
        var port = FreeLoopbackPort();
        await using var app = ConsoleWebApp.Build(_dir, new ConsoleServeSettings($"https://127.0.0.1:{port}", null, null, certificate, key), []);
        await app.StartAsync();
        try
        {
            using var http = new HttpClient(new HttpClientHandler
            {
                AllowAutoRedirect = false,
                ServerCertificateCustomValidationCallback = (_, served, _, _) => served is not null && SieveQ.Transport.Tls.TlsPin.Of(served.PublicKey).Equals(pin),
            });
            using var response = await http.GetAsync(new Uri($"https://127.0.0.1:{port}/healthz"));
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }
        finally
        {
            await app.StopAsync();
        }
        Assert.Equal(before, await File.ReadAllTextAsync(ConsoleConfig.PathIn(_dir)));
        // Half a pair, or a certificate with an http:// URL, is refused.
        Assert.Contains("go together", Assert.Throws<DeploymentException>(() => ConsoleWebApp.Build(_dir, new ConsoleServeSettings($"https://127.0.0.1:{port}", null, null, certificate), [])).Message,
            StringComparison.Ordinal);
        Assert.Contains("is http://", Assert.Throws<DeploymentException>(() => ConsoleWebApp.Build(_dir, new ConsoleServeSettings(null, null, null, certificate, key), [])).Message,
            StringComparison.Ordinal);
    }

    public Task DisposeAsync()
    {
        Directory.Delete(_dir, recursive: true);
        return Task.CompletedTask;
    }

    private static int FreeLoopbackPort()
    {
        using var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        return ((IPEndPoint)probe.LocalEndpoint).Port;
    }
}
