using System.Security.Cryptography;

namespace SieveQ.Rules.Signing;

/// <summary>
/// An administrator's public key (ECDSA P-256) as it is pinned and as sidecars name it: the DER
/// SubjectPublicKeyInfo, or its key id "sha256:" + hex of SHA-256(SPKI).
/// </summary>
public sealed class SignerKey
{
    private const string P256Oid = "1.2.840.10045.3.1.7";

    private SignerKey(byte[] spki)
    {
        SubjectPublicKeyInfo = spki;
        KeyId = "sha256:" + Convert.ToHexStringLower(SHA256.HashData(spki));
    }

    public byte[] SubjectPublicKeyInfo { get; }

    public string KeyId { get; }

    public string SpkiBase64 => Convert.ToBase64String(SubjectPublicKeyInfo);

    /// <summary>Throws <see cref="CryptographicException"/> unless the bytes are a P-256 public key.</summary>
    public static SignerKey FromSpki(ReadOnlySpan<byte> spki)
    {
        using var ecdsa = ECDsa.Create();
        ecdsa.ImportSubjectPublicKeyInfo(spki, out var read);
        if (read != spki.Length)
        {
            throw new CryptographicException("trailing bytes after the public key");
        }
        CheckCurve(ecdsa);
        // Re-export so that the pinned form is the canonical DER, whatever encoding came in.
        return new SignerKey(ecdsa.ExportSubjectPublicKeyInfo());
    }

    /// <summary>A PEM public key, or the public half of a PEM private key.</summary>
    public static SignerKey FromPem(string pem)
    {
        using var ecdsa = ECDsa.Create();
        try
        {
            ecdsa.ImportFromPem(pem);
        }
        catch (ArgumentException e)
        {
            throw new CryptographicException("no EC key in the PEM text", e);
        }
        CheckCurve(ecdsa);
        return new SignerKey(ecdsa.ExportSubjectPublicKeyInfo());
    }

    public static SignerKey Of(ECDsa key)
    {
        ArgumentNullException.ThrowIfNull(key);
        CheckCurve(key);
        return new SignerKey(key.ExportSubjectPublicKeyInfo());
    }

    /// <summary>IEEE P1363 (r || s) signature over SHA-256 of <paramref name="data"/>.</summary>
    public bool Verify(ReadOnlySpan<byte> data, ReadOnlySpan<byte> signature)
    {
        using var ecdsa = ECDsa.Create();
        ecdsa.ImportSubjectPublicKeyInfo(SubjectPublicKeyInfo, out _);
        return ecdsa.VerifyData(data, signature, HashAlgorithmName.SHA256, DSASignatureFormat.IeeeP1363FixedFieldConcatenation);
    }

    public bool Matches(string signer) =>
        string.Equals(signer, KeyId, StringComparison.Ordinal) || string.Equals(signer, SpkiBase64, StringComparison.Ordinal);

    private static void CheckCurve(ECDsa ecdsa)
    {
        var oid = ecdsa.ExportParameters(false).Curve.Oid;
        var p256 = oid.Value == P256Oid || oid.FriendlyName is "nistP256" or "ECDSA_P256" or "prime256v1" or "secp256r1";
        if (!p256 || ecdsa.KeySize != 256)
        {
            throw new CryptographicException("administrator keys are ECDSA P-256");
        }
    }
}
