using System.Security.Cryptography;

namespace SieveQ.Sieve.Keys;

/// <summary>
/// The deployment's pinned administrator public key (ECDSA P-256), as the replicas use it to check administrator
/// commands in agreed execution. One thread at a time (the replica's execution thread): .NET does not promise that
/// one key object verifies on several threads at once.
/// </summary>
public sealed class AdministratorKey : IDisposable
{
    private readonly ECDsa _key;

    /// <param name="spki">DER SubjectPublicKeyInfo; <see cref="CryptographicException"/> when it is not a P-256 key.</param>
    public AdministratorKey(ReadOnlySpan<byte> spki)
    {
        _key = ECDsa.Create();
        try
        {
            _key.ImportSubjectPublicKeyInfo(spki, out var read);
            if (read != spki.Length || _key.KeySize != 256)
            {
                throw new CryptographicException("the administrator key must be exactly one ECDSA P-256 SubjectPublicKeyInfo");
            }
        }
        catch
        {
            _key.Dispose();
            throw;
        }
    }

    public bool Verify(ReadOnlySpan<byte> data, ReadOnlySpan<byte> signature)
    {
        if (signature.Length != Envelope.EnvelopeLimits.SignatureBytes)
        {
            return false;
        }
        try
        {
            return _key.VerifyData(data, signature, HashAlgorithmName.SHA256, DSASignatureFormat.IeeeP1363FixedFieldConcatenation);
        }
        catch (CryptographicException)
        {
            return false;
        }
    }

    public void Dispose() => _key.Dispose();
}
