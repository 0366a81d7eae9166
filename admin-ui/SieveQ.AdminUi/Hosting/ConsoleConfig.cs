using System.Net;
using System.Net.Sockets;
using System.Text.Json;
using System.Text.Json.Serialization;
using SieveQ.AdminUi.Access;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Hosting;

/// <summary>
/// <c>console.json</c> in the deployment directory: where the console listens, its own management key (pinned in
/// controller.json as the caller <see cref="CallerName"/>), its user file and the lockout rule, its TLS certificate,
/// its OpenID Connect provider and where alarms are sent.
/// </summary>
public sealed record ConsoleConfig
{
    public const string FileName = "console.json";
    public const string CallerName = "console";
    private const long MaxBytes = 64 * 1024;

    internal static readonly JsonSerializerOptions Options = new()
    {
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        WriteIndented = true,
        ReadCommentHandling = JsonCommentHandling.Skip,
        AllowTrailingCommas = true,
        UnmappedMemberHandling = JsonUnmappedMemberHandling.Disallow,
        Converters = { new JsonStringEnumConverter(JsonNamingPolicy.CamelCase, allowIntegerValues: false) },
    };

    public required string Url { get; init; }
    /// <summary>The console's management key (PKCS#8 PEM, owner-only), relative to the deployment directory.</summary>
    public string KeyFile { get; init; } = Path.Combine("keys", "management-console.pem");
    public string UsersFile { get; init; } = Path.Combine("console", "users.json");
    /// <summary>The open alarms' first-seen times and acknowledgements (<see cref="Figures.AlarmJournal"/>), relative to the deployment directory.</summary>
    public string AlarmsFile { get; init; } = Path.Combine("console", "alarms.json");
    /// <summary>The provider's back-channel logouts still in force (<see cref="Access.ProviderLogouts"/>), relative to the deployment directory.</summary>
    public string ProviderLogoutsFile { get; init; } = Path.Combine("console", "provider-logouts.json");
    public string DataProtectionDirectory { get; init; } = Path.Combine("console", "data-protection");
    public int MaxFailedLogins { get; init; } = 5;
    public int LockoutMinutes { get; init; } = 15;
    public int SessionMinutes { get; init; } = 60;
    /// <summary>Windows sign-in (Negotiate, Kerberos) and its principal/group-to-role mapping; off when absent.</summary>
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public Access.WindowsSignInConfig? WindowsSignIn { get; init; }
    /// <summary>The certificate an https:// <see cref="Url"/> presents; none for http:// (loopback only).</summary>
    public ConsoleTlsConfig? Tls { get; init; }
    /// <summary>Sign-in through an OpenID Connect provider beside the local accounts; none when absent.</summary>
    public ConsoleOidcConfig? Oidc { get; init; }
    /// <summary>Where alarms are sent besides the alarms page (webhooks, e-mail); shown only when absent.</summary>
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public AlarmDelivery.AlarmDeliveryConfig? AlarmDelivery { get; init; }

    public static string PathIn(string deploymentDirectory) => Path.Combine(deploymentDirectory, FileName);

    public static ConsoleConfig Load(string deploymentDirectory)
    {
        var path = PathIn(deploymentDirectory);
        var cfg = BoundedJsonFile.Read<ConsoleConfig>(path, MaxBytes, Options, "no console configuration (`sieveq up` or `SieveQ.AdminUi init` creates one)");
        if (cfg is null)
        {
            throw new DeploymentException($"{path}: {ConsoleTls.UrlRule}");
        }
        ConsoleTls.CheckUrl(cfg.Url, cfg.Tls, path);
        cfg.Oidc?.Check(cfg.Url, path);
        if (cfg.MaxFailedLogins is < 1 or > 100 || cfg.LockoutMinutes is < 1 or > 24 * 60 || cfg.SessionMinutes is < 1 or > 24 * 60)
        {
            throw new DeploymentException($"{path}: maxFailedLogins 1..100, lockoutMinutes and sessionMinutes 1..1440");
        }
        cfg.WindowsSignIn?.Validate(path);
        cfg.AlarmDelivery?.Check(path);
        return cfg;
    }

    /// <summary>This configuration listening on <paramref name="url"/> instead (`serve --url`, the installed service's setting).</summary>
    public ConsoleConfig WithUrl(string url) => WithListener(url, Tls, $"--url '{url}'");

    /// <summary>
    /// This configuration listening on <paramref name="url"/> with <paramref name="tls"/> instead (`serve --url
    /// --tls-certificate --tls-key`: `sieveq up`'s generated certificate, console.json left as the operator wrote it).
    /// </summary>
    public ConsoleConfig WithListener(string url, ConsoleTlsConfig tls) => WithListener(url, tls, $"--url '{url}' with --tls-certificate");

    private ConsoleConfig WithListener(string url, ConsoleTlsConfig? tls, string where)
    {
        ConsoleTls.CheckUrl(url, tls, where);
        Oidc?.Check(url, $"--url '{url}'");
        return this with { Url = url, Tls = tls };
    }

    public void Save(string deploymentDirectory)
    {
        var path = PathIn(deploymentDirectory);
        File.WriteAllText(path + ".tmp", JsonSerializer.Serialize(this, Options));
        File.Move(path + ".tmp", path, overwrite: true);
    }

    public static ConsoleConfig CreateLocal() => new() { Url = $"http://127.0.0.1:{FreeLoopbackPort()}" };

    private static int FreeLoopbackPort()
    {
        using var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        return ((IPEndPoint)probe.LocalEndpoint).Port;
    }
}
