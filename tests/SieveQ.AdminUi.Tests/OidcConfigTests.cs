using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Tests;

/// <summary>console.json's "oidc" section: every malformed value refused when the console starts, with its reason.</summary>
public sealed class OidcConfigTests : IAsyncLifetime
{
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-console-oidc-config-").FullName;

    private static ConsoleOidcConfig Valid => new()
    {
        DisplayName = "Contoso",
        Authority = "https://login.contoso.example/tenant/v2.0",
        ClientId = "sieveq-console",
        ClientSecretFile = "console/oidc-secret",
        Roles = new Dictionary<string, string> { ["sq-ops"] = "operator", ["sq-view"] = "viewer", ["sq-admins"] = "administrator" },
    };

    public async Task InitializeAsync()
    {
        await BareConsoleDeployment.CreateAsync(_dir);
        ConsoleTls.CreateCertificate(_dir, "https://127.0.0.1:5443");
        WriteSecret("a-client-secret\n", UnixFileMode.UserRead | UnixFileMode.UserWrite);
    }

    private void WriteSecret(string text, UnixFileMode mode)
    {
        var path = Path.Combine(_dir, "console", "oidc-secret");
        File.WriteAllText(path, text);
        if (!OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(path, mode);
        }
    }

    private void Configure(ConsoleOidcConfig? oidc, string? url = null)
    {
        var raw = System.Text.Json.JsonSerializer.Deserialize<ConsoleConfig>(File.ReadAllText(ConsoleConfig.PathIn(_dir)), ConsoleConfig.Options)!;
        (raw with { Oidc = oidc, Url = url ?? raw.Url }).Save(_dir);
    }

    private string Refusal(ConsoleOidcConfig oidc)
    {
        Configure(oidc);
        return Assert.Throws<DeploymentException>(() => ConsoleWebApp.Build(_dir, ConsoleServeSettings.FromFiles, [])).Message;
    }

    [Fact]
    public async Task A_valid_configuration_starts_and_the_file_round_trips()
    {
        Configure(Valid with { Authority = "http://localhost:8080/", Scopes = ["profile", "email"], RoleClaim = "roles" });
        var loaded = ConsoleConfig.Load(_dir).Oidc!;
        Assert.Equal("roles", loaded.RoleClaim);
        Assert.Equal(["profile", "email"], loaded.Scopes);
        await using var app = ConsoleWebApp.Build(_dir, ConsoleServeSettings.FromFiles, []);
        Assert.NotNull(app);
        // http:// is accepted on loopback addresses too.
        Configure(Valid with { Authority = "http://127.0.0.1:8080/" });
        await using var second = ConsoleWebApp.Build(_dir, ConsoleServeSettings.FromFiles, []);
        Assert.NotNull(second);
    }

    [Fact]
    public void Malformed_authorities_and_cleartext_ones_off_loopback_are_refused()
    {
        foreach (var authority in new[] { "not a url", "ftp://login.contoso.example/", "login.contoso.example", "https://login.contoso.example/?tenant=1", "https://user:pw@login.contoso.example/" })
        {
            Assert.Contains("is not an http(s) URL", Refusal(Valid with { Authority = authority }), StringComparison.Ordinal);
        }
        foreach (var authority in new[] { "http://login.contoso.example/", "http://10.0.0.5/", "http://localhost.contoso.example/" })
        {
            Assert.Contains("cleartext off loopback", Refusal(Valid with { Authority = authority }), StringComparison.Ordinal);
        }
    }

    [Fact]
    public void A_missing_oversized_or_shared_secret_file_is_refused()
    {
        File.Delete(Path.Combine(_dir, "console", "oidc-secret"));
        Assert.Contains("does not exist", Refusal(Valid), StringComparison.Ordinal);
        if (!OperatingSystem.IsWindows())
        {
            WriteSecret("a-client-secret", UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead);
            Assert.Contains("owner-only", Refusal(Valid), StringComparison.Ordinal);
        }
        WriteSecret("", UnixFileMode.UserRead | UnixFileMode.UserWrite);
        Assert.Contains("empty", Refusal(Valid), StringComparison.Ordinal);
        WriteSecret(new string('s', 5000), UnixFileMode.UserRead | UnixFileMode.UserWrite);
        Assert.Contains("larger than", Refusal(Valid), StringComparison.Ordinal);
        WriteSecret("line one\nline two\n", UnixFileMode.UserRead | UnixFileMode.UserWrite);
        Assert.Contains("one line", Refusal(Valid), StringComparison.Ordinal);
    }

    [Fact]
    public void Unknown_role_names_and_malformed_fields_are_refused()
    {
        Assert.Contains("'sq-ops' maps to 'superuser'", Refusal(Valid with { Roles = new Dictionary<string, string> { ["sq-ops"] = "superuser" } }), StringComparison.Ordinal);
        Assert.Contains("'sq-ops' maps to 'Operator'", Refusal(Valid with { Roles = new Dictionary<string, string> { ["sq-ops"] = "Operator" } }), StringComparison.Ordinal);
        Assert.Contains("roles must map", Refusal(Valid with { Roles = new Dictionary<string, string>() }), StringComparison.Ordinal);
        Assert.Contains("roles key", Refusal(Valid with { Roles = new Dictionary<string, string> { ["bad\nvalue"] = "viewer" } }), StringComparison.Ordinal);
        Assert.Contains("displayName", Refusal(Valid with { DisplayName = "" }), StringComparison.Ordinal);
        Assert.Contains("displayName", Refusal(Valid with { DisplayName = new string('x', 65) }), StringComparison.Ordinal);
        Assert.Contains("clientId", Refusal(Valid with { ClientId = "two words" }), StringComparison.Ordinal);
        Assert.Contains("scopes", Refusal(Valid with { Scopes = ["profile", "bad scope"] }), StringComparison.Ordinal);
        Assert.Contains("scopes", Refusal(Valid with { Scopes = Enumerable.Range(0, 17).Select(i => $"s{i}").ToList() }), StringComparison.Ordinal);
        Assert.Contains("roleClaim", Refusal(Valid with { RoleClaim = "" }), StringComparison.Ordinal);
        Assert.Contains("clientSecretFile", Refusal(Valid with { ClientSecretFile = " " }), StringComparison.Ordinal);
    }

    [Fact]
    public void Oidc_needs_the_console_on_https()
    {
        Configure(Valid, url: "http://127.0.0.1:5080");
        // console.json still has its tls section from set-up; without it, http:// on loopback is the only other choice.
        var raw = System.Text.Json.JsonSerializer.Deserialize<ConsoleConfig>(File.ReadAllText(ConsoleConfig.PathIn(_dir)), ConsoleConfig.Options)!;
        (raw with { Tls = null }).Save(_dir);
        var e = Assert.Throws<DeploymentException>(() => ConsoleConfig.Load(_dir));
        Assert.Contains("needs the console on https://", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void The_highest_mapped_role_wins_and_unmapped_values_give_none()
    {
        Assert.Equal(ConsoleRole.Operator, Valid.RoleFor(["sq-view", "sq-ops", "unrelated"]));
        Assert.Equal(ConsoleRole.Administrator, Valid.RoleFor(["sq-admins", "sq-view"]));
        Assert.Null(Valid.RoleFor(["unrelated", "SQ-OPS"]));
        Assert.Null(Valid.RoleFor([]));
    }

    public Task DisposeAsync()
    {
        Directory.Delete(_dir, recursive: true);
        return Task.CompletedTask;
    }
}
