using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text.Json.Nodes;

namespace SieveQ.AdminUi.BrowserTests;

/// <summary>
/// The console with Windows sign-in on, against a real KDC: a deployment made by `sieveq init`, the console's
/// `init`, console.json's <c>windowsSignIn</c> (the realm's keytab; alice operator, victor viewer, nobody unmapped),
/// then the controller and the console as real processes, the console with the realm's KRB5_CONFIG. No replicas run:
/// a quarantine is recorded in the controller's audit log only, which is what these tests read.
/// </summary>
public sealed class KerberosConsole : IAsyncLifetime
{
    public static readonly string[] Users = ["alice", "victor", "nobody"];

    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-console-krb5-").FullName;
    private readonly List<string> _output = [];
    private Process? _controller;
    private Process? _console;

    public KerberosRealm Realm { get; private set; } = null!;
    public string Deployment => _dir;

    /// <summary>By the SPN's host name: a browser asks for a ticket for HTTP/localhost.</summary>
    public Uri ConsoleUrl { get; private set; } = null!;

    public async Task InitializeAsync()
    {
        Realm = await KerberosRealm.StartAsync(Users);
        await RunAsync("dotnet", LocalDeployment.SieveqDll, "deploy", "init", "--dir", _dir, "--f", "1", "--pre-sqs", "1");
        // This deployment never runs. Without the administrator key its controller records a quarantine at once, as
        // this test expects, instead of first trying to order it through pre-SQs that are not there.
        File.Delete(Path.Combine(_dir, "keys", "administrator.pem"));
        await RunAsync("dotnet", "exec", LocalDeployment.ConsoleDll, "init", "--deployment", _dir);
        var configFile = Path.Combine(_dir, "console.json");
        var config = JsonNode.Parse(await File.ReadAllTextAsync(configFile))!.AsObject();
        config["windowsSignIn"] = new JsonObject
        {
            ["keytab"] = Realm.Keytab,
            ["principals"] = new JsonObject { ["alice@" + KerberosRealm.Realm] = "operator", ["victor@" + KerberosRealm.Realm] = "viewer" },
        };
        await File.WriteAllTextAsync(configFile, config.ToJsonString());
        var port = new Uri(config["url"]!.GetValue<string>()).Port;
        ConsoleUrl = new Uri($"http://localhost:{port}/");

        _controller = Start(new ProcessStartInfo("dotnet") { ArgumentList = { LocalDeployment.SieveqDll, "controller", "--deployment", _dir } }, "controller");
        var controllerUrl = new Uri(JsonNode.Parse(await File.ReadAllTextAsync(Path.Combine(_dir, "controller.json")))!["url"]!.GetValue<string>());
        await WaitForPortAsync(controllerUrl.Port, _controller);

        var console = new ProcessStartInfo("dotnet") { ArgumentList = { "exec", LocalDeployment.ConsoleDll, "serve", "--deployment", _dir } };
        // The realm's configuration; the keytab comes from console.json (the console sets KRB5_KTNAME from it).
        console.Environment["KRB5_CONFIG"] = Realm.ConfigFile;
        console.Environment.Remove("KRB5_KTNAME");
        _console = Start(console, "console");
        await WaitForPortAsync(port, _console);
    }

    /// <summary>Everything the controller and the console wrote, for a failing assertion's message.</summary>
    public string Output()
    {
        lock (_output)
        {
            return string.Join('\n', _output);
        }
    }

    private Process Start(ProcessStartInfo psi, string name)
    {
        psi.RedirectStandardOutput = true;
        psi.RedirectStandardError = true;
        psi.UseShellExecute = false;
        var p = Process.Start(psi)!;
        p.OutputDataReceived += (_, e) => { if (e.Data is not null) { lock (_output) { _output.Add($"{name}: {e.Data}"); } } };
        p.ErrorDataReceived += (_, e) => { if (e.Data is not null) { lock (_output) { _output.Add($"{name} stderr: {e.Data}"); } } };
        p.BeginOutputReadLine();
        p.BeginErrorReadLine();
        return p;
    }

    private async Task WaitForPortAsync(int port, Process process)
    {
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while (DateTime.UtcNow < deadline && !process.HasExited)
        {
            try
            {
                using var probe = new TcpClient();
                await probe.ConnectAsync(IPAddress.Loopback, port);
                return;
            }
            catch (SocketException)
            {
                await Task.Delay(200);
            }
        }
        Assert.Fail($"nothing listening on {port}: " + Output());
    }

    private static async Task RunAsync(string file, params string[] args)
    {
        var psi = new ProcessStartInfo(file) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        using var p = Process.Start(psi)!;
        var output = await p.StandardOutput.ReadToEndAsync() + await p.StandardError.ReadToEndAsync();
        await p.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(180));
        Assert.True(p.ExitCode == 0, $"{string.Join(' ', args)}: {output}");
    }

    public async Task DisposeAsync()
    {
        foreach (var p in new[] { _console, _controller })
        {
            if (p is { HasExited: false })
            {
                Process.Start("kill", ["-TERM", p.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)])?.WaitForExit();
                try
                {
                    await p.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(20));
                }
                catch (TimeoutException)
                {
                    p.Kill(entireProcessTree: true);
                }
            }
            p?.Dispose();
        }
        if (Realm is not null)
        {
            await Realm.DisposeAsync();
        }
        try
        {
            Directory.Delete(_dir, recursive: true);
        }
        catch (IOException)
        {
            // a process still closing a file; the temp folder is cleaned by the system
        }
    }
}
