using System.Diagnostics;
using System.Net.Security;
using System.Reflection;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text.RegularExpressions;
using Microsoft.Playwright;

namespace SieveQ.AdminUi.BrowserTests;

/// <summary>
/// `sieveq up` in a temporary directory with demo traffic, as a real process, plus three console accounts made with
/// the console's own `add-user`: the deployment every test of the class shares. Every wait is bounded; disposing
/// stops `up` with SIGTERM (it stops its children) and removes the directory.
/// </summary>
public sealed partial class LocalDeployment : IAsyncLifetime
{
    private Process? _up;
    private readonly List<string> _output = [];

    public string Directory { get; } = System.IO.Directory.CreateTempSubdirectory("sieveq-console-").FullName;

    /// <summary>The deployment's initial rule set (version 1), outside its directory as an operator's file would be.</summary>
    private readonly string _rules = Path.Combine(Path.GetTempPath(), $"sieveq-console-rules-{Guid.NewGuid():N}.json");

    /// <summary>
    /// The demo's routes (senders 1 and 2 to receiver 100) as a rule set, so `up` pins an administrator key and the
    /// controller can order commands; <paramref name="stopSender2"/> puts a rule that denies sender 2's messages first.
    /// </summary>
    public static string RuleSet(int version, bool stopSender2)
    {
        var stop = stopSender2 ? """{ "name": "stop-sender-2", "action": "deny", "from": { "senders": [2] }, "to": { "receivers": [100] } },""" : "";
        return $$"""
            {
              "schema": "sieveq-ruleset/v1",
              "version": {{version}},
              "name": "{{(stopSender2 ? "demo-without-sender-2" : "demo")}}",
              "senders": [{ "id": 1 }, { "id": 2 }],
              "receivers": [{ "id": 100 }],
              "rules": [
                {{stop}}
                { "name": "demo-routes", "action": "allow", "from": { "senders": [1, 2] }, "to": { "receivers": [100] } }
              ]
            }
            """;
    }
    public Uri ConsoleUrl { get; private set; } = null!;
    /// <summary>The console CA `up` printed (DIR/keys/console-ca.crt).</summary>
    public string ConsoleAuthorityFile { get; private set; } = "";
    public string AdministratorPassword { get; private set; } = "";
    public Dictionary<string, string> Passwords { get; } = [];
    public IBrowser Browser { get; private set; } = null!;
    private IPlaywright? _playwright;

    /// <summary>Screenshots are kept here as test artefacts.</summary>
    public static string Artefacts { get; } = System.IO.Directory.CreateDirectory(
        Environment.GetEnvironmentVariable("SIEVEQ_TEST_ARTEFACTS") ?? Path.Combine(AppContext.BaseDirectory, "artefacts")).FullName;

    public static string SieveqDll =>
        typeof(LocalDeployment).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "SieveqDll").Value!;

    public static string ConsoleDll => Path.Combine(Path.GetDirectoryName(SieveqDll)!, "console", "SieveQ.AdminUi.dll");

    public async Task InitializeAsync()
    {
        var psi = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        await File.WriteAllTextAsync(_rules, RuleSet(1, stopSender2: false));
        foreach (var a in new[] { SieveqDll, "up", "--dir", Directory, "--rate", "200", "--rules", _rules })
        {
            psi.ArgumentList.Add(a);
        }
        _up = Process.Start(psi)!;
        var ready = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        _up.OutputDataReceived += (_, e) =>
        {
            if (e.Data is null)
            {
                ready.TrySetException(new InvalidOperationException("sieveq up ended: " + string.Join('\n', _output)));
                return;
            }
            lock (_output)
            {
                _output.Add(e.Data);
            }
            if (AdminPassword().Match(e.Data) is { Success: true } m)
            {
                AdministratorPassword = m.Groups[1].Value;
            }
            if (ConsoleLine().Match(e.Data) is { Success: true } c)
            {
                ConsoleUrl = new Uri(c.Groups[1].Value);
            }
            if (AuthorityLine().Match(e.Data) is { Success: true } a)
            {
                ConsoleAuthorityFile = a.Groups[1].Value;
            }
            if (e.Data.StartsWith("all components healthy", StringComparison.Ordinal))
            {
                ready.TrySetResult();
            }
        };
        _up.ErrorDataReceived += (_, e) => { if (e.Data is not null) { lock (_output) { _output.Add("stderr: " + e.Data); } } };
        _up.BeginOutputReadLine();
        _up.BeginErrorReadLine();
        await ready.Task.WaitAsync(TimeSpan.FromSeconds(300)); // a loaded CI machine: about 60 s there on a quiet day
        Assert.NotNull(ConsoleUrl);
        Assert.Matches("^[A-Za-z0-9]{20}$", AdministratorPassword);
        Passwords["admin"] = AdministratorPassword;
        var consoleKeyPin = await VerifiedConsoleKeyAsync();
        // Playwright's request client (context.APIRequest: the direct posts) is its Node driver, which trusts the
        // deployment's CA through NODE_EXTRA_CA_CERTS, read when the driver starts, here.
        Environment.SetEnvironmentVariable("NODE_EXTRA_CA_CERTS", ConsoleAuthorityFile);
        _playwright = await Playwright.CreateAsync();
        // Debian's Chromium, never a downloaded browser; Playwright gives each launch a new empty profile directory.
        // Chromium has no flag to add a trust anchor (its trust store is NSS's user database, which this must not
        // touch); it accepts the console's certificate by its key, pinned here after that certificate was checked
        // against the CA `up` printed (VerifiedConsoleKeyAsync). Any other certificate is still refused.
        Browser = await _playwright.Chromium.LaunchAsync(new BrowserTypeLaunchOptions
        {
            ExecutablePath = "/usr/bin/chromium",
            Headless = true,
            Args = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                $"--ignore-certificate-errors-spki-list={consoleKeyPin}"],
        });
        foreach (var (user, role) in new[] { ("operator1", "operator"), ("viewer1", "viewer"), ("locktest", "viewer"), ("pwtest", "viewer") })
        {
            Passwords[user] = await AddUserAsync(user, role);
        }
    }

    /// <summary>
    /// The console's certificate as a client trusting only the printed CA sees it (chain to that CA, the URL's name):
    /// its key's pin (base64 SHA-256 of the SubjectPublicKeyInfo), the form Chromium's SPKI list takes.
    /// </summary>
    private async Task<string> VerifiedConsoleKeyAsync()
    {
        Assert.Equal("https", ConsoleUrl.Scheme);
        Assert.Equal(Path.Combine(Directory, "keys", "console-ca.crt"), ConsoleAuthorityFile);
        using var authority = X509CertificateLoader.LoadCertificateFromFile(ConsoleAuthorityFile);
        string? pin = null;
        using var http = new HttpClient(new SocketsHttpHandler
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
                    if (errors != SslPolicyErrors.None || certificate is null)
                    {
                        return false;
                    }
                    using var served = X509CertificateLoader.LoadCertificate(certificate.GetRawCertData());
                    pin = Convert.ToBase64String(SHA256.HashData(served.PublicKey.ExportSubjectPublicKeyInfo()));
                    return true;
                },
            },
        })
        { Timeout = TimeSpan.FromSeconds(60) };
        Assert.Equal("ok", await http.GetStringAsync(new Uri(ConsoleUrl, "/healthz")));
        return pin!;
    }

    private async Task<string> AddUserAsync(string user, string role)
    {
        var psi = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var a in new[] { "exec", ConsoleDll, "add-user", "--deployment", Directory, "--user", user, "--role", role })
        {
            psi.ArgumentList.Add(a);
        }
        using var p = Process.Start(psi)!;
        var output = await p.StandardOutput.ReadToEndAsync();
        await p.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(180));
        Assert.True(p.ExitCode == 0, output + await p.StandardError.ReadToEndAsync());
        return UserPassword().Match(output).Groups[1].Value;
    }

    /// <summary>What `sieveq enrol request --name NAME` writes on a sender's host (keys and request in a folder of the deployment's directory).</summary>
    public async Task<string> EnrolmentRequestAsync(string name)
    {
        var output = Path.Combine(Directory, "sender-host-" + name);
        var psi = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var a in new[] { SieveqDll, "enrol", "request", "--name", name, "--out", output })
        {
            psi.ArgumentList.Add(a);
        }
        using var p = Process.Start(psi)!;
        var stdout = await p.StandardOutput.ReadToEndAsync();
        await p.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(180));
        Assert.True(p.ExitCode == 0, stdout + await p.StandardError.ReadToEndAsync());
        return await File.ReadAllTextAsync(Path.Combine(output, name + ".enrol-request.json"));
    }

    public async Task DisposeAsync()
    {
        if (Browser is not null)
        {
            await Browser.DisposeAsync();
        }
        _playwright?.Dispose();
        if (_up is { HasExited: false })
        {
            Process.Start("kill", ["-TERM", _up.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)])?.WaitForExit();
            try
            {
                await _up.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(40));
            }
            catch (TimeoutException)
            {
                _up.Kill(entireProcessTree: true);
            }
        }
        _up?.Dispose();
        File.Delete(_rules);
        try
        {
            System.IO.Directory.Delete(Directory, recursive: true);
        }
        catch (IOException)
        {
            // a child still closing a log file; the temp folder is cleaned by the system
        }
    }

    [GeneratedRegex(@"administrator admin password ([A-Za-z0-9]+)")]
    private static partial Regex AdminPassword();

    [GeneratedRegex(@"^\s+console\s+(https://\S+)$")]
    private static partial Regex ConsoleLine();

    [GeneratedRegex(@"^\s+console CA\s+(\S+)\s+SHA-256 ")]
    private static partial Regex AuthorityLine();

    [GeneratedRegex(@"password ([A-Za-z0-9]+)")]
    private static partial Regex UserPassword();
}
