using System.Security.Cryptography;
using SieveQ.Sieve.Hosting.Keys;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;
using SieveQ.Rules;
using SieveQ.Rules.Activation;
using SieveQ.Rules.Signing;

namespace SieveQ.Deployment;

/// <summary>
/// The rules section of a deployment: installing a signed initial rule set with the administrator
/// key, and loading it (checked against the pinned key) into the rules a replica-SQ runs.
/// </summary>
public static class DeploymentRules
{
    /// <summary>Key name in the deployment's key store (keys/administrator.pem) of a locally created administrator key.</summary>
    public const string AdministratorKeyName = "administrator";

    public const string InitialRuleSetFile = "rules/initial.json";

    /// <summary>
    /// Copies <paramref name="ruleSet"/> into the deployment, signs it with the administrator key and
    /// returns the section that pins that key. A rule set that would not compile is refused here,
    /// before any replica is asked to start with it.
    /// </summary>
    public static RulesEntry Install(string directory, byte[] ruleSet, string? administratorKeyPem)
    {
        ArgumentNullException.ThrowIfNull(ruleSet);
        CompiledRuleSet compiled;
        try
        {
            compiled = RuleSetLoader.CompileUnsigned(ruleSet);
        }
        catch (RuleSetException e)
        {
            throw new DeploymentException($"initial rule set refused: {e.Message}", e);
        }
        using var admin = administratorKeyPem is null
            ? new PemFileKeyStore(Path.Combine(directory, "keys")).GetOrCreateSigningKey(AdministratorKeyName)
            : ImportAdministrator(administratorKeyPem);
        var path = Path.Combine(directory, InitialRuleSetFile);
        Directory.CreateDirectory(Path.GetDirectoryName(path)!);
        File.WriteAllBytes(path, ruleSet);
        File.WriteAllBytes(path + SignatureSidecar.Extension, RuleSetSigner.Sign(compiled.Document.CanonicalBytes, admin).ToJson());
        return new RulesEntry { File = InitialRuleSetFile, AdministratorKey = SignerKey.Of(admin).SpkiBase64 };
    }

    /// <summary>The deployment's pinned administrator key (rules section or its own), or null when it pins none.</summary>
    public static SignerKey? PinnedAdministrator(DeploymentConfig config)
    {
        ArgumentNullException.ThrowIfNull(config);
        return config.Rules is { } rules ? Administrator(rules)
            : config.AdministratorKey is { } spki ? ParseAdministrator(spki, "administratorKey") : null;
    }

    /// <summary>
    /// A deployment without rule sets still pins an administrator key, so senders can be enrolled and routes changed
    /// through the ordering: the key in <c>keys/administrator.pem</c> (made if absent) or the PEM given.
    /// </summary>
    public static string CreateAdministrator(string directory, string? administratorKeyPem)
    {
        using var admin = administratorKeyPem is null
            ? new PemFileKeyStore(Path.Combine(directory, "keys")).GetOrCreateSigningKey(AdministratorKeyName)
            : ImportAdministrator(administratorKeyPem);
        return SignerKey.Of(admin).SpkiBase64;
    }

    /// <summary>The pinned administrator key of a deployment with a rules section.</summary>
    public static SignerKey Administrator(RulesEntry rules)
    {
        ArgumentNullException.ThrowIfNull(rules);
        return ParseAdministrator(rules.AdministratorKey, "rules: the administrator key");
    }

    private static SignerKey ParseAdministrator(string spkiBase64, string what)
    {
        try
        {
            return SignerKey.FromSpki(Convert.FromBase64String(spkiBase64));
        }
        catch (Exception e) when (e is FormatException or CryptographicException)
        {
            throw new DeploymentException($"{what} is not an ECDSA P-256 public key ({e.Message})", e);
        }
    }

    /// <summary>
    /// What a replica-SQ runs: with a rules section, the signed initial rule set (refused unless signed
    /// by the pinned key) under <see cref="OrderedRuleSets"/>, replaceable through the ordering;
    /// without, the fixed routes.
    /// </summary>
    public static IApplicationRules LoadReplicaRules(DeploymentConfig config)
    {
        ArgumentNullException.ThrowIfNull(config);
        if (config.Rules is not { } rules)
        {
            return new RoutePolicy(config.RouteList());
        }
        var admin = Administrator(rules);
        try
        {
            return new OrderedRuleSets(RuleSetLoader.LoadFile(config.Resolve(rules.File), admin).Compiled, admin);
        }
        catch (RuleSetException e)
        {
            throw new DeploymentException($"rules: initial rule set {config.Resolve(rules.File)} refused: {e.Message}", e);
        }
    }

    private static ECDsa ImportAdministrator(string pem)
    {
        var key = ECDsa.Create();
        try
        {
            key.ImportFromPem(pem);
            SignerKey.Of(key);
            return key;
        }
        catch (Exception e) when (e is ArgumentException or CryptographicException)
        {
            key.Dispose();
            throw new DeploymentException($"the administrator key is not an ECDSA P-256 private key ({e.Message})", e);
        }
    }
}
