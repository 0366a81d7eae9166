using System.Net;
using System.Net.Sockets;
using Microsoft.AspNetCore.Builder;
using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;
using SieveQ.Tests.OpenIdProvider;

namespace SieveQ.AdminUi.Tests;

/// <summary>
/// A console on https:// (certificate from init-tls) with OpenID Connect sign-in through the test provider on
/// loopback, shared by <see cref="OidcSignInTests"/>: each test uses its own cookie jars.
/// </summary>
public class OidcConsole : IAsyncLifetime
{
    /// <summary>Whether the provider has an end-session endpoint (RP-initiated logout).</summary>
    protected virtual bool ProviderEndsSessions => true;

    public string Directory { get; } = System.IO.Directory.CreateTempSubdirectory("sieveq-console-oidc-").FullName;
    public TestOpenIdProvider Provider { get; private set; } = null!;
    private WebApplication _console = null!;
    public Uri Url { get; private set; } = null!;

    public async Task InitializeAsync()
    {
        await BareConsoleDeployment.CreateAsync(Directory);
        Url = new Uri($"https://127.0.0.1:{FreeLoopbackPort()}");
        var (config, _) = ConsoleTls.CreateCertificate(Directory, Url.ToString().TrimEnd('/'));
        Provider = await TestOpenIdProvider.StartAsync("sieveq-console", "the-client-secret", new Uri(Url, OidcSignIn.CallbackPath),
        [
            new TestProviderUser("olga", "olga-password", ["staff", "sq-ops"]),
            new TestProviderUser("victor", "victor-password", ["sq-view"]),
            new TestProviderUser("ada", "ada-password", ["sq-admins"]),
            new TestProviderUser("nobody", "nobody-password", ["staff"]),
        ], ProviderEndsSessions);
        var secret = Path.Combine(Directory, "console", "oidc-secret");
        File.WriteAllText(secret, "the-client-secret\n");
        if (!OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(secret, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        }
        (config with
        {
            Oidc = new ConsoleOidcConfig
            {
                DisplayName = "Test provider",
                Authority = Provider.Authority.ToString(),
                ClientId = "sieveq-console",
                ClientSecretFile = "console/oidc-secret",
                Roles = new Dictionary<string, string> { ["sq-ops"] = "operator", ["sq-view"] = "viewer", ["sq-admins"] = "administrator" },
            },
        }).Save(Directory);
        _console = ConsoleWebApp.Build(Directory, ConsoleServeSettings.FromFiles, []);
        await _console.StartAsync();
    }

    public async Task DisposeAsync()
    {
        await _console.StopAsync();
        await _console.DisposeAsync();
        await Provider.DisposeAsync();
        System.IO.Directory.Delete(Directory, recursive: true);
    }

    private static int FreeLoopbackPort()
    {
        using var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        return ((IPEndPoint)probe.LocalEndpoint).Port;
    }
}

/// <summary>The same console, its provider without an end-session endpoint: sign-out is the console's own.</summary>
public sealed class OidcConsoleWithoutEndSession : OidcConsole
{
    protected override bool ProviderEndsSessions => false;
}
