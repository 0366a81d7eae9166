using System.Runtime.Versioning;
using System.Security.Cryptography;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Hosting.Keys;

/// <summary>
/// Keys persisted by Windows CNG: in the TPM through the Microsoft Platform Crypto Provider when the
/// machine has one (the private key never leaves the chip), otherwise in the Microsoft Software Key
/// Storage Provider (DPAPI-protected, machine-wide). Keys are created non-exportable.
/// <para>
/// Windows only. On the Linux build machines this class is compiled (the CNG types exist in the
/// reference assemblies, and the platform analyzer checks every call is guarded) but never run; its
/// portable twin, exercised by the tests, is <see cref="PemFileKeyStore"/>.
/// </para>
/// </summary>
[SupportedOSPlatform("windows")]
public sealed class CngKeyStore : ISenderKeyStore
{
    private static readonly CngProvider PlatformProvider = new("Microsoft Platform Crypto Provider");

    private readonly string _prefix;
    private readonly CngProvider _provider;

    /// <param name="prefix">Prepended to key names so SieveQ's containers are recognisable, e.g. "SieveQ-".</param>
    /// <param name="preferTpm">Use the TPM's provider when it is present.</param>
    public CngKeyStore(string prefix = "SieveQ-", bool preferTpm = true)
    {
        _prefix = prefix;
        _provider = preferTpm && TpmPresent() ? PlatformProvider : CngProvider.MicrosoftSoftwareKeyStorageProvider;
    }

    /// <summary>The provider keys go to: the TPM's or the software KSP.</summary>
    public string ProviderName => _provider.Provider;

    public bool Exists(string name) => CngKey.Exists(ContainerOf(name), _provider, CngKeyOpenOptions.MachineKey);

    public ECDsa GetOrCreateSigningKey(string name)
    {
        var key = Exists(name) ? Open(name) : Create(name, CngAlgorithm.ECDsaP256);
        return new ECDsaCng(key);
    }

    public ECDsa OpenSigningKey(string name) =>
        Exists(name) ? new ECDsaCng(Open(name)) : throw new KeyStoreException($"no CNG key '{name}' in {_provider.Provider}");

    public ECDiffieHellman GetOrCreateAgreementKey(string name)
    {
        var key = Exists(name) ? Open(name) : Create(name, CngAlgorithm.ECDiffieHellmanP256);
        return new ECDiffieHellmanCng(key);
    }

    public byte[] ExportPublicKey(string name)
    {
        using var key = Open(name);
        if (key.Algorithm == CngAlgorithm.ECDiffieHellmanP256)
        {
            using var dh = new ECDiffieHellmanCng(key);
            return dh.ExportSubjectPublicKeyInfo();
        }
        using var dsa = new ECDsaCng(key);
        return dsa.ExportSubjectPublicKeyInfo();
    }

    private string ContainerOf(string name) => _prefix + KeyNames.Check(name);

    private CngKey Open(string name)
    {
        try
        {
            return CngKey.Open(ContainerOf(name), _provider, CngKeyOpenOptions.MachineKey);
        }
        catch (CryptographicException e)
        {
            throw new KeyStoreException($"cannot open CNG key '{name}' in {_provider.Provider}", e);
        }
    }

    private CngKey Create(string name, CngAlgorithm algorithm)
    {
        var parameters = new CngKeyCreationParameters
        {
            Provider = _provider,
            KeyCreationOptions = CngKeyCreationOptions.MachineKey,
            ExportPolicy = CngExportPolicies.None,
            KeyUsage = algorithm == CngAlgorithm.ECDsaP256 ? CngKeyUsages.Signing : CngKeyUsages.KeyAgreement,
        };
        try
        {
            return CngKey.Create(algorithm, ContainerOf(name), parameters);
        }
        catch (CryptographicException e)
        {
            throw new KeyStoreException($"cannot create CNG key '{name}' in {_provider.Provider}", e);
        }
    }

    /// <summary>Asking for a key that surely does not exist tells whether the provider itself loads.</summary>
    private static bool TpmPresent()
    {
        try
        {
            _ = CngKey.Exists("SieveQ-probe-" + Guid.NewGuid().ToString("N"), PlatformProvider);
            return true;
        }
        catch (CryptographicException)
        {
            return false;
        }
    }
}
