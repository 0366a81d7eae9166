using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;

namespace SieveQ.AdminUi.BrowserTests;

/// <summary>
/// A second console process of the fixture's deployment, on https:// with a certificate made by the console's own
/// `init-tls`, and with OpenID Connect sign-in through <paramref name="authority"/>: console.json is changed for its
/// start and put back once it runs, so `up`'s console and the other tests keep theirs.
/// </summary>
public sealed partial class HttpsConsole : IAsyncDisposable
{
    private readonly Process _process;
    private readonly List<string> _output = [];

    private HttpsConsole(Process process, Uri url)
    {
        _process = process;
        Url = url;
    }

    public Uri Url { get; }

    public const string ClientId = "sieveq-console";

    public static Uri RedirectUri(Uri console) => new(console, "/signin-oidc");

    public static Uri NewUrl() => new($"https://127.0.0.1:{FreeLoopbackPort()}");

    public static async Task<HttpsConsole> StartAsync(string deploymentDirectory, Uri url, Uri authority, string clientSecret, IReadOnlyDictionary<string, string> roles)
    {
        var consoleJson = Path.Combine(deploymentDirectory, "console.json");
        var saved = await File.ReadAllTextAsync(consoleJson);
        try
        {
            var (code, output) = await RunAsync(["exec", LocalDeployment.ConsoleDll, "init-tls", "--deployment", deploymentDirectory, "--url", url.ToString().TrimEnd('/')]);
            Assert.True(code == 0, output);
            var certificateFile = InitTlsCertificate().Match(output).Groups[1].Value;
            var secretFile = Path.Combine(deploymentDirectory, "console", "oidc-secret");
            await File.WriteAllTextAsync(secretFile, clientSecret + "\n");
            if (!OperatingSystem.IsWindows())
            {
                File.SetUnixFileMode(secretFile, UnixFileMode.UserRead | UnixFileMode.UserWrite);
            }
            var config = JsonNode.Parse(await File.ReadAllTextAsync(consoleJson))!.AsObject();
            var mapping = new JsonObject();
            foreach (var (value, role) in roles)
            {
                mapping[value] = role;
            }
            config["oidc"] = new JsonObject
            {
                ["displayName"] = "Test provider",
                ["authority"] = authority.ToString(),
                ["clientId"] = ClientId,
                ["clientSecretFile"] = "console/oidc-secret",
                ["scopes"] = new JsonArray("profile"),
                ["roleClaim"] = "groups",
                ["roles"] = mapping,
            };
            await File.WriteAllTextAsync(consoleJson, config.ToJsonString());

            var psi = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
            foreach (var a in new[] { "exec", LocalDeployment.ConsoleDll, "serve", "--deployment", deploymentDirectory })
            {
                psi.ArgumentList.Add(a);
            }
            var console = new HttpsConsole(Process.Start(psi)!, url);
            console._process.OutputDataReceived += (_, e) => console.Record(e.Data);
            console._process.ErrorDataReceived += (_, e) => console.Record(e.Data);
            console._process.BeginOutputReadLine();
            console._process.BeginErrorReadLine();
            await console.WaitHealthyAsync(Path.Combine(deploymentDirectory, certificateFile));
            return console;
        }
        finally
        {
            await File.WriteAllTextAsync(consoleJson, saved);
        }
    }

    private void Record(string? line)
    {
        if (line is not null)
        {
            lock (_output)
            {
                _output.Add(line);
            }
        }
    }

    public string Output
    {
        get
        {
            lock (_output)
            {
                return string.Join('\n', _output);
            }
        }
    }

    /// <summary>Polls /healthz over TLS, trusting exactly the certificate init-tls wrote.</summary>
    private async Task WaitHealthyAsync(string certificateFile)
    {
        using var expected = X509CertificateLoader.LoadCertificateFromFile(certificateFile);
        using var http = new HttpClient(new HttpClientHandler
        {
            ServerCertificateCustomValidationCallback = (_, presented, _, _) => presented is not null && presented.RawData.AsSpan().SequenceEqual(expected.RawData),
        })
        { Timeout = TimeSpan.FromSeconds(5) };
        var deadline = DateTime.UtcNow.AddSeconds(240);
        while (true)
        {
            Assert.False(_process.HasExited, "the https console ended: " + Output);
            try
            {
                using var response = await http.GetAsync(new Uri(Url, "/healthz"));
                if (response.IsSuccessStatusCode)
                {
                    return;
                }
            }
            catch (Exception e) when (e is HttpRequestException or TaskCanceledException)
            {
                // not listening yet
            }
            Assert.True(DateTime.UtcNow < deadline, "the https console did not answer in 90 s: " + Output);
            await Task.Delay(250);
        }
    }

    private static async Task<(int Code, string Output)> RunAsync(string[] args)
    {
        var psi = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        using var p = Process.Start(psi)!;
        var output = p.StandardOutput.ReadToEndAsync();
        var errors = p.StandardError.ReadToEndAsync();
        await p.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(180));
        return (p.ExitCode, await output + await errors);
    }

    private static int FreeLoopbackPort()
    {
        using var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        return ((IPEndPoint)probe.LocalEndpoint).Port;
    }

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            Process.Start("kill", ["-TERM", _process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)])?.WaitForExit();
            try
            {
                await _process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(30));
            }
            catch (TimeoutException)
            {
                _process.Kill(entireProcessTree: true);
            }
        }
        _process.Dispose();
    }

    [GeneratedRegex(@"^certificate (\S+) sha256 fingerprint [0-9A-F]{64}$", RegexOptions.Multiline)]
    private static partial Regex InitTlsCertificate();
}
