using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text.Json;
using System.Text.Json.Serialization;
using SieveQ.Controller.Access;
using SieveQ.Deployment;

namespace SieveQ.Controller;

/// <summary>One entry of <c>controller.json</c>'s caller list.</summary>
public sealed record ControllerCallerEntry
{
    public required string Name { get; init; }
    public required ManagementRole Role { get; init; }
    /// <summary>Base64 DER SubjectPublicKeyInfo of the caller's ECDSA P-256 key.</summary>
    public required string PublicKey { get; init; }

    /// <summary>For role replica, and only for it: the replica-SQ's ordering id (its signing key is the one cluster.json pins).</summary>
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public int? ReplicaId { get; init; }
}

/// <summary>
/// <c>controller.json</c> in the deployment directory: where the controller listens, where its audit log lives, and
/// the pinned management callers with their roles. It has the same standing as <c>deployment.json</c> (which pins the
/// administrator key for rule sets): it lives with the controller, is written by `sieveq up` / the administrator,
/// and a caller's role is what this file says, never what a request says.
/// </summary>
public sealed record ControllerConfig
{
    public const string FileName = "controller.json";
    private const long MaxBytes = 1024 * 1024;
    private const int MaxCallers = 1024;

    /// <summary>A caller's name goes into every audit record of its calls; bounded so that record always fits.</summary>
    public const int MaxCallerNameLength = 64;

    private static readonly JsonSerializerOptions Options = new()
    {
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        WriteIndented = true,
        ReadCommentHandling = JsonCommentHandling.Skip,
        AllowTrailingCommas = true,
        UnmappedMemberHandling = JsonUnmappedMemberHandling.Disallow,
        Converters = { new JsonStringEnumConverter(JsonNamingPolicy.CamelCase, allowIntegerValues: false) },
    };

    public required string Url { get; init; }

    /// <summary>For an https:// <see cref="Url"/>: the pin (base64 SHA-256 of the SubjectPublicKeyInfo) of the controller's TLS key.</summary>
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? TlsPin { get; init; }

    /// <summary>The controller's TLS certificate and key in the deployment's key folder: controller-tls.crt / controller-tls.key.</summary>
    public const string TlsFileStem = "controller-tls";

    public Transport.Tls.TlsPin? Pin() => DeploymentTls.ParsePin(Url, TlsPin);
    public string AuditDirectory { get; init; } = Path.Combine("data", "controller", "audit");
    public long MaxAuditFileBytes { get; init; } = 16 * 1024 * 1024;
    public required IReadOnlyList<ControllerCallerEntry> Callers { get; init; }

    /// <summary>
    /// The administrator's private key (PEM, relative to the deployment directory) the controller signs ordered
    /// commands with; it must be the key deployment.json pins (rules.administratorKey). Null: the controller records
    /// quarantine and readmission requests but cannot apply them.
    /// </summary>
    public string? CommandKeyFile { get; init; }

    /// <summary>Refuse rule sets pushed without their .sig file; otherwise the controller signs them with the command key.</summary>
    public bool RequireSignedRuleSets { get; init; }

    /// <summary>
    /// A proactive recovery round every this many minutes (10 to 43,200, i.e. 30 days); absent: rounds only when an
    /// administrator asks (`sieveq admin replica round`). Needs an orchestrator that owns the replicas (`sieveq up`).
    /// </summary>
    public int? RecoveryRoundEveryMinutes { get; init; }

    /// <summary>Canonical copies of the rule sets the controller knows by version, for diffs against the running one.</summary>
    public string RuleSetArchiveDirectory { get; init; } = Path.Combine("data", "controller", "rule-sets");

    public IReadOnlyList<PinnedCaller> PinnedCallers() =>
        Callers.Select(c => new PinnedCaller(c.Name, c.Role, Convert.FromBase64String(c.PublicKey), c.ReplicaId)).ToList();

    public static string PathIn(string deploymentDirectory) => Path.Combine(deploymentDirectory, FileName);

    public static ControllerConfig Load(string deploymentDirectory)
    {
        var path = PathIn(deploymentDirectory);
        var cfg = BoundedJsonFile.Read<ControllerConfig>(path, MaxBytes, Options, "no controller configuration (`sieveq up` creates one for a local deployment)");
        if (cfg is null || cfg.Callers is null || cfg.Callers.Count > MaxCallers || cfg.Url is null)
        {
            throw new DeploymentException($"{path}: needs a url and at most {MaxCallers} callers");
        }
        try
        {
            cfg.Pin();
        }
        catch (DeploymentException e)
        {
            throw new DeploymentException($"{path}: {e.Message}", e);
        }
        if (cfg.RecoveryRoundEveryMinutes is { } minutes
            && (TimeSpan.FromMinutes(minutes) < Orchestration.ProactiveRecoveryRounds.MinInterval || TimeSpan.FromMinutes(minutes) > Orchestration.ProactiveRecoveryRounds.MaxInterval))
        {
            throw new DeploymentException($"{path}: recoveryRoundEveryMinutes must be {Orchestration.ProactiveRecoveryRounds.MinInterval.TotalMinutes:0} to {Orchestration.ProactiveRecoveryRounds.MaxInterval.TotalMinutes:0}");
        }
        var replicaIds = new HashSet<int>();
        foreach (var c in cfg.Callers)
        {
            if (c.Name is not { Length: > 0 and <= MaxCallerNameLength } || c.Name.Any(char.IsControl))
            {
                throw new DeploymentException($"{path}: a caller's name is 1 to {MaxCallerNameLength} characters without control characters");
            }
            if ((c.Role == ManagementRole.Replica) != c.ReplicaId.HasValue || c.ReplicaId is < 0 || (c.ReplicaId is { } r && !replicaIds.Add(r)))
            {
                throw new DeploymentException($"{path}: caller '{c.Name}': a replicaId (unique, not negative) goes with role replica and only with it");
            }
            try
            {
                using var key = ECDsa.Create();
                key.ImportSubjectPublicKeyInfo(Convert.FromBase64String(c.PublicKey), out _);
            }
            catch (Exception e) when (e is FormatException or CryptographicException)
            {
                throw new DeploymentException($"{path}: caller '{c.Name}': publicKey is not a base64 ECDSA P-256 SubjectPublicKeyInfo", e);
            }
        }
        return cfg;
    }

    public void Save(string deploymentDirectory)
    {
        var path = PathIn(deploymentDirectory);
        var tmp = path + ".tmp";
        File.WriteAllText(tmp, JsonSerializer.Serialize(this, Options));
        File.Move(tmp, path, overwrite: true);
    }

    /// <summary>The key file of a local deployment's caller of <paramref name="role"/> (private, in the deployment's key folder).</summary>
    public static string LocalKeyFile(DeploymentConfig deployment, ManagementRole role)
    {
        ArgumentNullException.ThrowIfNull(deployment);
        return Path.Combine(deployment.Resolve(deployment.KeyDirectory), $"management-{role.ToString().ToLowerInvariant()}.pem");
    }

    /// <summary>
    /// For a local deployment (`sieveq up`): a controller.json with a free loopback port (https:// with a new TLS key and
    /// certificate when the deployment's pre-SQs serve TLS) and one administrator, one
    /// operator and one viewer key, private keys written only into the deployment's key folder (owner-only). Kept as
    /// it is when it exists.
    /// </summary>
    public static ControllerConfig EnsureLocal(DeploymentConfig deployment)
    {
        ArgumentNullException.ThrowIfNull(deployment);
        if (File.Exists(PathIn(deployment.BaseDirectory)))
        {
            return Load(deployment.BaseDirectory);
        }
        var callers = new List<ControllerCallerEntry>();
        foreach (var role in (ManagementRole[])[ManagementRole.Administrator, ManagementRole.Operator, ManagementRole.Viewer])
        {
            var keyFile = LocalKeyFile(deployment, role);
            using var key = File.Exists(keyFile) ? ManagementKeyFile.Read(keyFile) : ManagementKeyFile.Create(keyFile);
            callers.Add(new ControllerCallerEntry
            {
                Name = role.ToString().ToLowerInvariant(),
                Role = role,
                PublicKey = Convert.ToBase64String(key.ExportSubjectPublicKeyInfo()),
            });
        }
        // Each replica-SQ reports its notices with its ordering identity key (cluster.json's), pinned here under role
        // replica. A deployment without its cluster file yet gets none: its replicas' reports are then refused, and say so.
        var clusterFile = deployment.Resolve(deployment.ClusterFile);
        var replicas = File.Exists(clusterFile) ? SieveQ.Bft.Hosting.Config.ClusterConfigFile.Load(clusterFile).Replicas : [];
        callers.AddRange(replicas.Select(r => new ControllerCallerEntry
        {
            Name = $"replica-sq-{r.Id}",
            Role = ManagementRole.Replica,
            PublicKey = r.PublicKey,
            ReplicaId = r.Id,
        }));
        // A local deployment keeps its administrator key in its key folder: the controller may use it.
        var administrator = Path.Combine(deployment.KeyDirectory, DeploymentRules.AdministratorKeyName + ".pem");
        var tls = deployment.PreSqs.Any(p => p.Pin() is not null);
        var cfg = new ControllerConfig
        {
            Url = $"{(tls ? "https" : "http")}://127.0.0.1:{FreeLoopbackPort()}",
            TlsPin = tls ? DeploymentTls.Create(deployment.Resolve(deployment.KeyDirectory), TlsFileStem, "controller") : null,
            Callers = callers,
            CommandKeyFile = deployment.PinnedAdministratorKey is not null && File.Exists(deployment.Resolve(administrator)) ? administrator : null,
        };
        cfg.Save(deployment.BaseDirectory);
        return cfg;
    }

    private static int FreeLoopbackPort()
    {
        using var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        return ((IPEndPoint)probe.LocalEndpoint).Port;
    }
}

/// <summary>A management caller's private key: an unencrypted PKCS#8 PEM, readable by its owner only.</summary>
public static class ManagementKeyFile
{
    private const long MaxBytes = 16 * 1024;

    public static ECDsa Read(string path)
    {
        if (!File.Exists(path) || new FileInfo(path).Length > MaxBytes)
        {
            throw new DeploymentException($"{path}: no management key file (or larger than {MaxBytes} bytes)");
        }
        var key = ECDsa.Create();
        try
        {
            key.ImportFromPem(File.ReadAllText(path));
        }
        catch (Exception e) when (e is ArgumentException or CryptographicException)
        {
            key.Dispose();
            throw new DeploymentException($"{path}: not an ECDSA private key in PEM ({e.Message})", e);
        }
        if (key.KeySize != 256)
        {
            key.Dispose();
            throw new DeploymentException($"{path}: not a P-256 key");
        }
        return key;
    }

    public static ECDsa Create(string path)
    {
        Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(path))!);
        var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var options = new FileStreamOptions { Mode = FileMode.CreateNew, Access = FileAccess.Write };
        if (!OperatingSystem.IsWindows())
        {
            options.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        }
        using (var file = new StreamWriter(path, System.Text.Encoding.ASCII, options))
        {
            file.Write(key.ExportPkcs8PrivateKeyPem());
        }
        return key;
    }
}
