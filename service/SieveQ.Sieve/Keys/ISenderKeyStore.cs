using System.Security.Cryptography;

namespace SieveQ.Sieve.Keys;

/// <summary>
/// Where an endpoint keeps its long-lived private keys: an ECDSA P-256 key that signs its messages and
/// acknowledgements, and an ECDH P-256 key from which its MAC keys are derived. The two are separate
/// keys under separate names: one key, one purpose. Callers own and dispose the returned objects.
/// </summary>
public interface ISenderKeyStore
{
    bool Exists(string name);

    /// <summary>Opens the signing key called <paramref name="name"/>, creating it first if absent.</summary>
    ECDsa GetOrCreateSigningKey(string name);

    /// <summary>Opens an existing signing key; throws <see cref="KeyStoreException"/> when absent or unsafe.</summary>
    ECDsa OpenSigningKey(string name);

    /// <summary>Opens the key-agreement key called <paramref name="name"/>, creating it first if absent.</summary>
    ECDiffieHellman GetOrCreateAgreementKey(string name);

    /// <summary>The public half as SubjectPublicKeyInfo DER, the form enrolment records carry.</summary>
    byte[] ExportPublicKey(string name);
}
