using System.Security.Cryptography;

namespace SieveQ.Rules.Signing;

/// <summary>Who signed a rule set, and whether that key is the pinned administrator key.</summary>
public sealed record SignatureCheck(SignerKey Signer, bool Pinned);

/// <summary>
/// Detached signatures over a rule set's RFC 8785 canonical form. The canonical form, not the file's
/// bytes, is signed so that reformatting the document (indentation, member order) keeps the signature
/// valid, while any change of meaning breaks it. No domain tag is prepended: JSON text starts with "{"
/// and no SieveQ binary structure does, and plain JCS lets any ECDSA tool check a rule set.
/// </summary>
public static class RuleSetSigner
{
    public static SignatureSidecar Sign(ReadOnlySpan<byte> canonical, ECDsa adminKey)
    {
        ArgumentNullException.ThrowIfNull(adminKey);
        var signer = SignerKey.Of(adminKey);
        var signature = adminKey.SignData(canonical, HashAlgorithmName.SHA256, DSASignatureFormat.IeeeP1363FixedFieldConcatenation);
        return new SignatureSidecar(signer.SpkiBase64, signature);
    }

    /// <summary>
    /// With a pinned key, the sidecar must name that key and the signature must verify under it.
    /// Without one, the sidecar must carry the full public key, the signature must verify under it, and
    /// the result says the signer was not pinned (integrity only, not authority).
    /// </summary>
    public static SignatureCheck Verify(ReadOnlySpan<byte> canonical, SignatureSidecar sidecar, SignerKey? pinned)
    {
        ArgumentNullException.ThrowIfNull(sidecar);
        SignerKey key;
        if (pinned is not null)
        {
            if (!pinned.Matches(sidecar.Signer))
            {
                throw Bad($"signed by {Describe(sidecar.Signer)}, not by the pinned administrator key {pinned.KeyId}");
            }
            key = pinned;
        }
        else
        {
            if (sidecar.Signer.StartsWith("sha256:", StringComparison.Ordinal))
            {
                throw Bad($"the signature file names key {sidecar.Signer} only; pass the administrator's public key to check it");
            }
            try
            {
                key = SignerKey.FromSpki(Convert.FromBase64String(sidecar.Signer));
            }
            catch (Exception e) when (e is FormatException or CryptographicException)
            {
                throw Bad("the signer is neither a key id nor a base64 P-256 public key", e);
            }
        }
        if (!key.Verify(canonical, sidecar.Signature))
        {
            throw Bad($"the signature does not match the document's canonical form (key {key.KeyId}): the document or the signature was changed");
        }
        return new SignatureCheck(key, pinned is not null);
    }

    private static string Describe(string signer) =>
        signer.StartsWith("sha256:", StringComparison.Ordinal) ? signer : TryKeyId(signer);

    private static string TryKeyId(string spkiBase64)
    {
        try
        {
            return SignerKey.FromSpki(Convert.FromBase64String(spkiBase64)).KeyId;
        }
        catch (Exception e) when (e is FormatException or CryptographicException)
        {
            return "an unreadable key";
        }
    }

    private static RuleSetException Bad(string message, Exception? inner = null) => new(RuleSetErrorKind.Signature, "", message, inner);
}
