using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Sieve.Hosting.Keys;
using SieveQ.Sieve.Keys;

namespace SieveQ.Deployment;

/// <summary>What a fresh local deployment should contain.</summary>
public sealed record LocalDeploymentSpec
{
    public int F { get; init; } = 1;
    public int PreSqs { get; init; } = 2;
    public IReadOnlyList<int> Senders { get; init; } = [1, 2];
    public IReadOnlyList<int> Receivers { get; init; } = [100];
    public int BasePort { get; init; } = 17_000;
    public string Host { get; init; } = "127.0.0.1";
    public bool Durability { get; init; } = true;
    public int MaxBytes { get; init; } = 64 * 1024;
    public ReplicaConfig? Protocol { get; init; }
    /// <summary>The replica-SQs' sieve tunables (budgets, windows); null for the defaults.</summary>
    public SieveQ.Sieve.Replica.ReplicaSieveOptions? Sieve { get; init; }
    /// <summary>An initial rule set (JSON): the replicas then run signed rule sets instead of fixed routes.</summary>
    public byte[]? RuleSet { get; init; }
    /// <summary>The administrator's private key (PEM) to sign <see cref="RuleSet"/> with; null: a new one in keys/administrator.pem.</summary>
    public string? AdministratorKeyPem { get; init; }
    /// <summary>TLS 1.3 with pinned keys on every gRPC endpoint (https://); false: cleartext HTTP/2 (http://), to measure what TLS costs.</summary>
    public bool Tls { get; init; } = true;
}

/// <summary>
/// Creates a complete deployment in one directory: the ordering cluster (replica and pre-SQ identity
/// keys), every party's signing and agreement keys (PEM, owner-only), each server's TLS key and self-signed
/// certificate (<see cref="DeploymentTls"/>, pinned in the deployment file), the enrolment, and
/// <c>deployment.json</c> with loopback endpoints: replica links on basePort+i, replica APIs on
/// basePort+100+i, pre-SQs on basePort+200+j, one agent on a Unix socket in the directory; with a
/// rule set, also the administrator key and the signed initial rule set (<see cref="DeploymentRules"/>).
/// </summary>
public static class DeploymentBootstrap
{
    public const string EnrolmentFileName = "enrolment.json";

    /// <summary>The file that keeps a deployment (its private keys above all) out of any git repository it is created in.</summary>
    public const string GitIgnoreFileName = ".gitignore";

    private static void WriteGitIgnore(string directory)
    {
        var path = Path.Combine(directory, GitIgnoreFileName);
        if (!File.Exists(path))
        {
            File.WriteAllText(path, "# Written by sieveq: this deployment holds private keys and state; never commit it.\n*\n");
        }
    }

    public static DeploymentConfig Create(string directory, LocalDeploymentSpec spec)
    {
        ArgumentNullException.ThrowIfNull(spec);
        var n = 3 * spec.F + 1;
        var full = Path.GetFullPath(directory);
        Directory.CreateDirectory(full);
        WriteGitIgnore(full);
        ClusterBootstrap.Create(full, n, spec.PreSqs, spec.BasePort, spec.Protocol, spec.Durability, spec.Host);
        var preSqIds = Enumerable.Range(n, spec.PreSqs).ToList();
        var store = new PemFileKeyStore(Path.Combine(full, "keys"));

        var enrolment = new Enrolment(spec.F,
            spec.Senders.Select(s => new EnrolledSender(s, $"sender-{s}", Signing(store, PartyRole.Sender, s), Agreement(store, PartyRole.Sender, s))).ToList(),
            spec.Receivers.Select(r => new EnrolledReceiver(r, $"receiver-{r}", Signing(store, PartyRole.Receiver, r), Agreement(store, PartyRole.Receiver, r))).ToList(),
            preSqIds.Select(p => new EnrolledPreSq(p, $"pre-sq-{p}", Agreement(store, PartyRole.PreSq, p))).ToList(),
            Enumerable.Range(0, n).Select(i => new EnrolledReplica(i, $"replica-sq-{i}", Agreement(store, PartyRole.Replica, i))).ToList());
        enrolment.Validate();
        File.WriteAllText(Path.Combine(full, EnrolmentFileName), enrolment.ToJson());

        var keys = Path.Combine(full, "keys");
        var scheme = spec.Tls ? "https" : "http";
        var config = new DeploymentConfig
        {
            F = spec.F,
            Replicas = Enumerable.Range(0, n).Select(i => new ReplicaSqEntry
            {
                Id = i,
                Name = $"replica-sq-{i}",
                ApiUrl = $"{scheme}://{spec.Host}:{spec.BasePort + 100 + i}",
                TlsPin = spec.Tls ? DeploymentTls.Create(keys, DeploymentTls.FileStem(PartyRole.Replica, i), $"replica-sq-{i}") : null,
            }).ToList(),
            PreSqs = preSqIds.Select((p, j) => new PreSqEntry
            {
                Id = p,
                Name = $"pre-sq-{p}",
                Url = $"{scheme}://{spec.Host}:{spec.BasePort + 200 + j}",
                TlsPin = spec.Tls ? DeploymentTls.Create(keys, DeploymentTls.FileStem(PartyRole.PreSq, p), $"pre-sq-{p}") : null,
            }).ToList(),
            Agents = [new AgentEntry { Name = "agent", Socket = "agent.sock", Senders = spec.Senders, Receivers = spec.Receivers }],
            Routes = spec.Senders.SelectMany(s => spec.Receivers.Select(r => new RouteEntry { Sender = s, Receiver = r, MaxBytes = spec.MaxBytes })).ToList(),
            BaseDirectory = full,
            Sieve = spec.Sieve ?? new(),
            Rules = spec.RuleSet is { } ruleSet ? DeploymentRules.Install(full, ruleSet, spec.AdministratorKeyPem) : null,
            AdministratorKey = spec.RuleSet is null ? DeploymentRules.CreateAdministrator(full, spec.AdministratorKeyPem) : null,
        };
        config.Validate();
        DeploymentFile.Save(config, Path.Combine(full, DeploymentFile.FileName));
        return config;
    }

    private static byte[] Signing(PemFileKeyStore store, PartyRole role, int id)
    {
        using var k = store.GetOrCreateSigningKey(PartyKeys.SigningKeyName(role, id));
        return k.ExportSubjectPublicKeyInfo();
    }

    private static byte[] Agreement(PemFileKeyStore store, PartyRole role, int id)
    {
        using var k = store.GetOrCreateAgreementKey(PartyKeys.AgreementKeyName(role, id));
        return k.ExportSubjectPublicKeyInfo();
    }
}
