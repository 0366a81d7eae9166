using System.Security.Claims;
using System.Text.Json.Nodes;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using SieveQ.AdminUi.Access;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Tests;

/// <summary>console.json's <c>windowsSignIn</c>: its rules as `serve` reads the file, the role mapping and a Windows session's re-check.</summary>
public sealed class WindowsSignInConfigTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-console-windows-").FullName;

    private string Keytab(UnixFileMode mode)
    {
        var path = Path.Combine(_dir, "console.keytab");
        File.WriteAllBytes(path, [5, 2]);
        if (!OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(path, mode);
        }
        return path;
    }

    /// <summary>Writes console.json with <paramref name="windowsSignIn"/> and loads it as `serve` does.</summary>
    private ConsoleConfig Load(JsonNode windowsSignIn)
    {
        var json = new JsonObject { ["url"] = "http://127.0.0.1:5000", ["windowsSignIn"] = windowsSignIn };
        File.WriteAllText(ConsoleConfig.PathIn(_dir), json.ToJsonString());
        return ConsoleConfig.Load(_dir);
    }

    private string Refusal(JsonNode windowsSignIn) => Assert.Throws<DeploymentException>(() => Load(windowsSignIn)).Message;

    [Fact]
    public void A_valid_section_loads_and_its_absence_leaves_windows_sign_in_off()
    {
        var cfg = Load(new JsonObject
        {
            ["keytab"] = Keytab(UnixFileMode.UserRead | UnixFileMode.UserWrite),
            ["principals"] = new JsonObject { ["alice@EXAMPLE.COM"] = "operator", ["EXAMPLE\\vera"] = "viewer", ["HTTP/host.example.com@EXAMPLE.COM"] = "viewer" },
            ["groups"] = new JsonObject { ["S-1-5-21-1004336348-1177238915-682003330-1104"] = "administrator", ["EXAMPLE\\SieveQ Operators"] = "operator" },
        });
        Assert.NotNull(cfg.WindowsSignIn);
        File.WriteAllText(ConsoleConfig.PathIn(_dir), """{ "url": "http://127.0.0.1:5000" }""");
        Assert.Null(ConsoleConfig.Load(_dir).WindowsSignIn);
        // Saving a configuration without the section does not write an empty one.
        ConsoleConfig.Load(_dir).Save(_dir);
        Assert.DoesNotContain("windowsSignIn", File.ReadAllText(ConsoleConfig.PathIn(_dir)), StringComparison.Ordinal);
    }

    [Fact]
    public void Unknown_roles_an_empty_mapping_and_malformed_names_are_refused_each_named()
    {
        Assert.Contains("maps nobody to a role", Refusal(new JsonObject()), StringComparison.Ordinal);
        Assert.Contains("maps nobody to a role", Refusal(new JsonObject { ["principals"] = new JsonObject(), ["groups"] = new JsonObject() }), StringComparison.Ordinal);

        var message = Refusal(new JsonObject
        {
            ["principals"] = new JsonObject { ["alice@EXAMPLE.COM"] = "admin", ["bob@EXAMPLE.COM"] = "Operator" },
            ["groups"] = new JsonObject { ["S-1-5-21-1"] = "root" },
        });
        Assert.Contains("windowsSignIn.principals['alice@EXAMPLE.COM']: unknown role 'admin' (viewer, operator or administrator)", message, StringComparison.Ordinal);
        Assert.Contains("unknown role 'Operator'", message, StringComparison.Ordinal);
        Assert.Contains("windowsSignIn.groups['S-1-5-21-1']: unknown role 'root'", message, StringComparison.Ordinal);

        foreach (var principal in new[] { "alice", "alice@", "@EXAMPLE.COM", "al ice@EXAMPLE.COM", "alice@EXAMPLE.COM@X", "alice@EXA MPLE", "EXAMPLE\\", "\\alice",
            "alice'@EXAMPLE.COM", "alice\u0007@EXAMPLE.COM", new string('a', 60) + "@EXAMPLE.COM" })
        {
            Assert.Contains("is not a principal", Refusal(new JsonObject { ["principals"] = new JsonObject { [principal] = "viewer" } }), StringComparison.Ordinal);
        }
        foreach (var group in new[] { "Operators", "S-1-", "S-1-5-x", "EXAMPLE\\Ops ", "EXAMPLE\\", "EXAMPLE\\a\u0001b" })
        {
            Assert.Contains("is not a group", Refusal(new JsonObject { ["groups"] = new JsonObject { [group] = "viewer" } }), StringComparison.Ordinal);
        }
        // A control character is never echoed back.
        Assert.DoesNotContain("\u0007", Refusal(new JsonObject { ["principals"] = new JsonObject { ["a\u0007@X"] = "viewer" } }), StringComparison.Ordinal);
    }

    [Fact]
    public void The_keytab_must_be_an_absolute_path_to_a_file_others_cannot_read_and_is_not_echoed()
    {
        JsonObject With(string keytab) => new() { ["keytab"] = keytab, ["principals"] = new JsonObject { ["alice@EXAMPLE.COM"] = "viewer" } };
        Assert.Contains("keytab must be an absolute path", Refusal(With("console.keytab")), StringComparison.Ordinal);
        var missing = Path.Combine(_dir, "missing.keytab");
        var refusal = Refusal(With(missing));
        Assert.Contains("keytab: no such file", refusal, StringComparison.Ordinal);
        Assert.DoesNotContain(missing, refusal, StringComparison.Ordinal);
        Assert.Contains("must not be readable by others", Refusal(With(Keytab(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.OtherRead))), StringComparison.Ordinal);
        Assert.NotNull(Load(With(Keytab(UnixFileMode.UserRead | UnixFileMode.GroupRead))).WindowsSignIn);
    }

    [Fact]
    public void A_principal_or_group_maps_to_its_role_the_highest_winning_and_an_unmapped_identity_gets_none()
    {
        var map = new WindowsSignInConfig
        {
            Principals = new() { ["alice@EXAMPLE.COM"] = "operator", ["EXAMPLE\\vera"] = "viewer" },
            Groups = new() { ["S-1-5-21-7-1104"] = "administrator", ["EXAMPLE\\SieveQ Viewers"] = "viewer" },
        };
        Assert.Equal((ConsoleRole.Operator, "principal:alice@EXAMPLE.COM"), map.RoleFor("alice@EXAMPLE.COM", []));
        // Kerberos names compare exactly; Windows names and SIDs as Windows does, ignoring case.
        Assert.Null(map.RoleFor("ALICE@EXAMPLE.COM", []));
        Assert.Null(map.RoleFor("alice@example.com", []));
        Assert.Equal(ConsoleRole.Viewer, map.RoleFor("example\\VERA", [])?.Role);
        Assert.Equal((ConsoleRole.Administrator, "group:s-1-5-21-7-1104"), map.RoleFor("EXAMPLE\\vera", ["EXAMPLE\\SieveQ Viewers", "s-1-5-21-7-1104"]));
        Assert.Equal((ConsoleRole.Operator, "principal:alice@EXAMPLE.COM"), map.RoleFor("alice@EXAMPLE.COM", ["EXAMPLE\\SieveQ Viewers"]));
        Assert.Null(map.RoleFor("nobody@EXAMPLE.COM", ["S-1-5-21-7-513"]));
        Assert.Equal(ConsoleRole.Administrator, map.RoleOfEntry("group:S-1-5-21-7-1104"));
        Assert.Null(map.RoleOfEntry("group:S-1-5-21-7-1105"));
        Assert.Null(map.RoleOfEntry("alice@EXAMPLE.COM"));
        Assert.Equal("kerberos:alice@EXAMPLE.COM", NegotiateSignIn.ConsoleName("alice@EXAMPLE.COM"));
        Assert.Equal("windows:EXAMPLE\\vera", NegotiateSignIn.ConsoleName("EXAMPLE\\vera"));
    }

    [Fact]
    public async Task A_windows_session_lasts_while_its_mapping_entry_gives_the_same_role()
    {
        var users = ConsoleUserStore.Open(Path.Combine(_dir, "users.json"), new ConsoleConfig { Url = "http://127.0.0.1:1" });
        async Task<bool> ValidAsync(WindowsSignInConfig? windows, string role, string mappedBy)
        {
            var services = new ServiceCollection();
            services.AddLogging();
            services.AddAuthentication(CookieAuthenticationDefaults.AuthenticationScheme).AddCookie();
            services.AddSingleton(new ConsoleConfig { Url = "http://127.0.0.1:1", WindowsSignIn = windows });
            await using var provider = services.BuildServiceProvider();
            var principal = new ClaimsPrincipal(new ClaimsIdentity(
            [
                new Claim(ClaimTypes.Name, "kerberos:alice@EXAMPLE.COM"), new Claim(ClaimTypes.Role, role),
                new Claim(ClaimTypes.AuthenticationMethod, NegotiateSignIn.Method), new Claim(NegotiateSignIn.MappedByClaim, mappedBy),
            ], CookieAuthenticationDefaults.AuthenticationScheme));
            var context = new CookieValidatePrincipalContext(new DefaultHttpContext { RequestServices = provider },
                new AuthenticationScheme(CookieAuthenticationDefaults.AuthenticationScheme, null, typeof(CookieAuthenticationHandler)),
                new CookieAuthenticationOptions(), new AuthenticationTicket(principal, CookieAuthenticationDefaults.AuthenticationScheme));
            await SessionCheck.ValidateAsync(context, users);
            return context.Principal is not null;
        }
        var map = new WindowsSignInConfig { Principals = new() { ["alice@EXAMPLE.COM"] = "operator" }, Groups = new() { ["S-1-5-21-7-1104"] = "viewer" } };
        Assert.True(await ValidAsync(map, "operator", "principal:alice@EXAMPLE.COM"));
        Assert.True(await ValidAsync(map, "viewer", "group:S-1-5-21-7-1104"));
        // The mapping changed (a restart with another console.json), Windows sign-in was switched off, or the
        // session claims a role its entry does not give: signed out. No local account is needed or consulted.
        Assert.False(await ValidAsync(map, "administrator", "principal:alice@EXAMPLE.COM"));
        Assert.False(await ValidAsync(map with { Principals = new() { ["alice@EXAMPLE.COM"] = "viewer" } }, "operator", "principal:alice@EXAMPLE.COM"));
        Assert.False(await ValidAsync(map, "viewer", "group:S-1-5-21-7-9999"));
        Assert.False(await ValidAsync(null, "operator", "principal:alice@EXAMPLE.COM"));
    }

    public void Dispose() => Directory.Delete(_dir, recursive: true);
}
