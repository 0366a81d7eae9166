using System.Security.Cryptography;
using System.Text;

namespace SieveQ.Sieve.Envelope;

/// <summary>
/// What a new sender or receiver asks to be enrolled as: its name, both public keys (DER SubjectPublicKeyInfo, P-256) and its
/// proof of possession, an ECDSA P-256 / SHA-256 (IEEE P1363) signature by the private half of
/// <see cref="SignaturePublicKey"/> over <see cref="EnrolmentProof.SignedBytes"/>. The proof shows the requester holds
/// the signing key it names, so nobody can get someone else's public key enrolled under a name of their choosing.
/// </summary>
public sealed record PartyEnrolmentClaim(string Name, ReadOnlyMemory<byte> SignaturePublicKey, ReadOnlyMemory<byte> AgreementPublicKey, ReadOnlyMemory<byte> Proof);

/// <summary>
/// The proof of possession of an enrolment request: signed bytes <c>"SIEVEQ/ENROL-REQUEST/v1" || u32 len | name (UTF-8)
/// | u32 len | signature SPKI | u32 len | agreement SPKI</c>. Names are 1 to <see cref="MaxNameBytes"/> bytes of
/// letters, digits, '-', '_' and '.'; each key at most <see cref="MaxKeyBytes"/> bytes.
/// </summary>
public static class EnrolmentProof
{
    public const int MaxNameBytes = 64;

    /// <summary>A P-256 SubjectPublicKeyInfo is 91 bytes; the bound leaves room and no more.</summary>
    public const int MaxKeyBytes = 128;

    public static byte[] SignedBytes(string name, ReadOnlySpan<byte> signaturePublicKey, ReadOnlySpan<byte> agreementPublicKey)
    {
        ArgumentNullException.ThrowIfNull(name);
        var nameBytes = Encoding.UTF8.GetBytes(name);
        using var w = new CanonicalWriter(DomainTags.EnrolRequest.Length + 12 + nameBytes.Length + signaturePublicKey.Length + agreementPublicKey.Length);
        w.Raw(DomainTags.EnrolRequest);
        w.Bytes(nameBytes);
        w.Bytes(signaturePublicKey);
        w.Bytes(agreementPublicKey);
        return w.ToArray();
    }

    /// <summary>The proof a sender or receiver makes with its own signing key.</summary>
    public static byte[] Sign(string name, ReadOnlySpan<byte> signaturePublicKey, ReadOnlySpan<byte> agreementPublicKey, ECDsa signingKey)
    {
        ArgumentNullException.ThrowIfNull(signingKey);
        return signingKey.SignData(SignedBytes(name, signaturePublicKey, agreementPublicKey), HashAlgorithmName.SHA256, DSASignatureFormat.IeeeP1363FixedFieldConcatenation);
    }

    /// <summary>Why the claim cannot be enrolled (structure, keys, proof), or null when it can.</summary>
    public static string? Problem(PartyEnrolmentClaim claim)
    {
        ArgumentNullException.ThrowIfNull(claim);
        if (NameProblem(claim.Name) is { } n)
        {
            return n;
        }
        using var signing = ECDsa.Create();
        using var agreement = ECDiffieHellman.Create();
        try
        {
            signing.ImportSubjectPublicKeyInfo(claim.SignaturePublicKey.Span, out var read);
            if (read != claim.SignaturePublicKey.Length || signing.KeySize != 256)
            {
                return "the signature public key is not one P-256 SubjectPublicKeyInfo";
            }
        }
        catch (CryptographicException)
        {
            return "the signature public key is not a P-256 SubjectPublicKeyInfo";
        }
        try
        {
            agreement.ImportSubjectPublicKeyInfo(claim.AgreementPublicKey.Span, out var read);
            if (read != claim.AgreementPublicKey.Length || agreement.KeySize != 256)
            {
                return "the agreement public key is not one P-256 SubjectPublicKeyInfo";
            }
        }
        catch (CryptographicException)
        {
            return "the agreement public key is not a P-256 SubjectPublicKeyInfo";
        }
        if (claim.Proof.Length != EnvelopeLimits.SignatureBytes)
        {
            return "the proof of possession is not a 64-byte signature";
        }
        try
        {
            var data = SignedBytes(claim.Name, claim.SignaturePublicKey.Span, claim.AgreementPublicKey.Span);
            return signing.VerifyData(data, claim.Proof.Span, HashAlgorithmName.SHA256, DSASignatureFormat.IeeeP1363FixedFieldConcatenation)
                ? null
                : "the proof of possession is not signed by the private half of the signature public key";
        }
        catch (CryptographicException)
        {
            return "the proof of possession is not signed by the private half of the signature public key";
        }
    }

    /// <summary>Why a name cannot be enrolled, or null.</summary>
    public static string? NameProblem(string? name)
    {
        if (string.IsNullOrEmpty(name) || Encoding.UTF8.GetByteCount(name) > MaxNameBytes)
        {
            return $"a name is 1 to {MaxNameBytes} bytes";
        }
        foreach (var c in name)
        {
            if (!(char.IsAsciiLetterOrDigit(c) || c is '-' or '_' or '.'))
            {
                return $"a name holds letters, digits, '-', '_' and '.' only ('{name}')";
            }
        }
        return null;
    }
}
