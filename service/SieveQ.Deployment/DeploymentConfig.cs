using System.Text.Json.Serialization;
using SieveQ.Sieve.Replica;
using SieveQ.Transport.Tls;

namespace SieveQ.Deployment;

/// <summary>A replica-SQ: its ordering id (0..n-1, as in the cluster file) and its gRPC endpoint for post-SQs and pre-SQs.</summary>
public sealed record ReplicaSqEntry
{
    public required int Id { get; init; }
    public required string Name { get; init; }
    public required string ApiUrl { get; init; }

    /// <summary>For an https:// <see cref="ApiUrl"/>: the <see cref="Transport.Tls.TlsPin"/> of its TLS key (base64), which clients check.</summary>
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? TlsPin { get; init; }

    public TlsPin? Pin() => DeploymentTls.ParsePin(ApiUrl, TlsPin);
}

/// <summary>A pre-SQ gateway: its id is its ordering-client id in the cluster file.</summary>
public sealed record PreSqEntry
{
    public required int Id { get; init; }
    public required string Name { get; init; }
    public required string Url { get; init; }

    /// <summary>For an https:// <see cref="Url"/>: the <see cref="Transport.Tls.TlsPin"/> of its TLS key (base64), which clients check.</summary>
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? TlsPin { get; init; }

    public TlsPin? Pin() => DeploymentTls.ParsePin(Url, TlsPin);
}

/// <summary>An agent: the local endpoint applications use, and the identities it may act as.</summary>
public sealed record AgentEntry
{
    public required string Name { get; init; }
    public required string Socket { get; init; }
    public IReadOnlyList<int> Senders { get; init; } = [];
    public IReadOnlyList<int> Receivers { get; init; } = [];
    /// <summary>Unix user ids allowed to use the socket (empty: only the agent's own user).</summary>
    public IReadOnlyList<int> AllowedUids { get; init; } = [];
    /// <summary>
    /// Windows user SIDs (S-1-5-21-...) allowed to use the named pipe besides the agent's own user and LocalSystem
    /// (empty: only those two). Checked at load (<see cref="WindowsSid"/>); compared in canonical form.
    /// </summary>
    public IReadOnlyList<string> AllowedSids { get; init; } = [];
}

public sealed record RouteEntry
{
    public required int Sender { get; init; }
    public required int Receiver { get; init; }
    public int MaxBytes { get; init; } = 64 * 1024;
}

/// <summary>
/// Application rules run by the replica-SQs instead of the fixed <see cref="DeploymentConfig.Routes"/>:
/// the initial rule set (a file, its signature beside it as FILE.sig) and the administrator key every
/// rule set and rule-set command must be signed by. Later versions arrive through the ordering
/// (`sieveq rules push`), not through this file.
/// </summary>
public sealed record RulesEntry
{
    /// <summary>The initial rule set, relative to the deployment directory.</summary>
    public required string File { get; init; }

    /// <summary>The pinned administrator key: base64 DER SubjectPublicKeyInfo of an ECDSA P-256 key.</summary>
    public required string AdministratorKey { get; init; }
}

/// <summary>
/// The deployment file (<c>deployment.json</c>): everything a component needs to find the others and
/// its own keys. Paths are relative to the file's directory. The replicas' agreed configuration
/// (enrolment, routes, sieve options) must be identical on every replica; it comes from this file,
/// which the controller distributes.
/// </summary>
public sealed record DeploymentConfig
{
    public required int F { get; init; }
    public string ClusterFile { get; init; } = "cluster.json";
    public string EnrolmentFile { get; init; } = "enrolment.json";
    public string KeyDirectory { get; init; } = "keys";
    public string DataDirectory { get; init; } = "data";
    /// <summary>Current MAC key epoch; the previous one is still accepted, so a rotation drops nothing.</summary>
    public uint MacEpoch { get; init; } = 1;
    public required IReadOnlyList<ReplicaSqEntry> Replicas { get; init; }
    public required IReadOnlyList<PreSqEntry> PreSqs { get; init; }
    public IReadOnlyList<AgentEntry> Agents { get; init; } = [];
    public IReadOnlyList<RouteEntry> Routes { get; init; } = [];
    public ReplicaSieveOptions Sieve { get; init; } = new();
    /// <summary>When set, the replicas run these signed rule sets; otherwise <see cref="Routes"/> only.</summary>
    public RulesEntry? Rules { get; init; }

    /// <summary>
    /// The administrator key pinned for administrator commands (enrolment, quarantine, route changes) in a deployment
    /// without a rules section: base64 DER SubjectPublicKeyInfo of an ECDSA P-256 key. With a rules section the key is
    /// <see cref="RulesEntry.AdministratorKey"/>, and this, if given, must be the same. Without either, the replicas
    /// take no administrator commands.
    /// </summary>
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? AdministratorKey { get; init; }

    /// <summary>The pinned administrator key (base64 SPKI), from the rules section or the deployment itself; null when none.</summary>
    public string? PinnedAdministratorKey => Rules?.AdministratorKey ?? AdministratorKey;

    /// <summary>Set on load: the directory relative paths are resolved against.</summary>
    public string BaseDirectory { get; init; } = Directory.GetCurrentDirectory();

    public int N => Replicas.Count;

    public string Resolve(string path) => Path.IsPathRooted(path) ? path : Path.GetFullPath(Path.Combine(BaseDirectory, path));

    public ReplicaSqEntry Replica(int id) => Replicas.FirstOrDefault(r => r.Id == id) ?? throw new DeploymentException($"no replica-SQ {id} in the deployment");

    public PreSqEntry PreSq(int id) => PreSqs.FirstOrDefault(p => p.Id == id) ?? throw new DeploymentException($"no pre-SQ {id} in the deployment");

    public AgentEntry Agent(string name) => Agents.FirstOrDefault(a => a.Name == name) ?? throw new DeploymentException($"no agent '{name}' in the deployment");

    public IEnumerable<Route> RouteList() => Routes.Select(r => new Route(r.Sender, r.Receiver, r.MaxBytes));

    public void Validate()
    {
        if (F < 0 || Replicas is null || PreSqs is null || Agents is null || Routes is null || Sieve is null)
        {
            throw new DeploymentException("deployment needs f >= 0 and the replica, pre-SQ, agent and route lists");
        }
        if (Replicas.Count != 3 * F + 1 || !Replicas.Select(r => r.Id).Order().SequenceEqual(Enumerable.Range(0, 3 * F + 1)))
        {
            throw new DeploymentException($"deployment needs replica-SQs 0..{3 * F} for f = {F}");
        }
        if (PreSqs.Count == 0 || PreSqs.Select(p => p.Id).Distinct().Count() != PreSqs.Count || PreSqs.Any(p => p.Id < Replicas.Count))
        {
            throw new DeploymentException("deployment needs at least one pre-SQ, ids unique and above the replica ids (they are ordering-client ids)");
        }
        foreach (var (url, pin) in Replicas.Select(r => (r.ApiUrl, r.TlsPin)).Concat(PreSqs.Select(p => (p.Url, p.TlsPin))))
        {
            DeploymentTls.ParsePin(url, pin);
        }
        if (Agents.Select(a => a.Name).Distinct(StringComparer.Ordinal).Count() != Agents.Count)
        {
            throw new DeploymentException("agent names must be unique");
        }
        foreach (var agent in Agents)
        {
            foreach (var sid in agent.AllowedSids ?? [])
            {
                if (!WindowsSid.TryCanonicalize(sid, out _))
                {
                    throw new DeploymentException($"agent '{agent.Name}': allowedSids entry \"{sid}\" is not a Windows SID (S-1-<authority>-<subauthority>..., 1 to 15 subauthorities)");
                }
            }
        }
        if (Routes.Any(r => r.MaxBytes is < 0 or > SieveQ.Sieve.Envelope.EnvelopeLimits.MaxDataBytes))
        {
            throw new DeploymentException("route size limit out of range");
        }
        if (Rules is not null)
        {
            if (string.IsNullOrWhiteSpace(Rules.File))
            {
                throw new DeploymentException("rules: \"file\" must name the initial rule set");
            }
            if (string.IsNullOrWhiteSpace(Rules.AdministratorKey) || !IsBase64(Rules.AdministratorKey))
            {
                throw new DeploymentException("rules: \"administratorKey\" must be the base64 SubjectPublicKeyInfo of the administrator's ECDSA P-256 key");
            }
        }
        if (AdministratorKey is not null)
        {
            if (string.IsNullOrWhiteSpace(AdministratorKey) || !IsBase64(AdministratorKey))
            {
                throw new DeploymentException("\"administratorKey\" must be the base64 SubjectPublicKeyInfo of the administrator's ECDSA P-256 key");
            }
            if (Rules is not null && !string.Equals(Rules.AdministratorKey, AdministratorKey, StringComparison.Ordinal))
            {
                throw new DeploymentException("\"administratorKey\" and rules.administratorKey differ: a deployment pins one administrator key");
            }
        }
        Sieve.Validate();
    }

    private static bool IsBase64(string s)
    {
        var buffer = new byte[s.Length];
        return Convert.TryFromBase64String(s, buffer, out var n) && n > 0;
    }
}

public sealed class DeploymentException : Exception
{
    public DeploymentException() { }

    public DeploymentException(string message) : base(message) { }

    public DeploymentException(string message, Exception inner) : base(message, inner) { }
}
