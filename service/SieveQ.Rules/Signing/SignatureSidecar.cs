using System.Text;
using System.Text.Json;

namespace SieveQ.Rules.Signing;

/// <summary>
/// FILE.sig next to a rule set: {"signer": base64 SPKI or "sha256:..." key id, "signature": base64 of
/// the 64-byte IEEE P1363 ECDSA P-256 signature over the document's RFC 8785 canonical form}.
/// </summary>
public sealed record SignatureSidecar(string Signer, byte[] Signature)
{
    public const string Extension = ".sig";

    public const int MaxBytes = 4096;

    public static SignatureSidecar Parse(ReadOnlySpan<byte> json)
    {
        if (json.Length > MaxBytes)
        {
            throw Bad($"signature file is {json.Length} bytes, the limit is {MaxBytes}");
        }
        try
        {
            using var doc = JsonDocument.Parse(json.ToArray(), new JsonDocumentOptions { AllowDuplicateProperties = false, MaxDepth = 4 });
            var root = doc.RootElement;
            if (root.ValueKind != JsonValueKind.Object)
            {
                throw Bad("signature file must be a JSON object");
            }
            string? signer = null;
            string? signature = null;
            foreach (var p in root.EnumerateObject())
            {
                if (p.Value.ValueKind != JsonValueKind.String)
                {
                    throw Bad($"signature file member \"{p.Name}\" must be a string");
                }
                switch (p.Name)
                {
                    case "signer":
                        signer = p.Value.GetString();
                        break;
                    case "signature":
                        signature = p.Value.GetString();
                        break;
                    default:
                        throw Bad($"signature file has an unknown member \"{p.Name}\"");
                }
            }
            if (string.IsNullOrEmpty(signer) || signature is null)
            {
                throw Bad("signature file needs \"signer\" and \"signature\"");
            }
            var bytes = Convert.FromBase64String(signature);
            if (bytes.Length != 64)
            {
                throw Bad($"signature is {bytes.Length} bytes; ECDSA P-256 in IEEE P1363 form is 64");
            }
            return new SignatureSidecar(signer, bytes);
        }
        catch (JsonException e)
        {
            throw Bad("signature file is not valid JSON", e);
        }
        catch (FormatException e)
        {
            throw Bad("signature is not valid base64", e);
        }
        catch (InvalidOperationException e)
        {
            throw Bad("signature file holds an invalid string", e);
        }
    }

    public byte[] ToJson() => Encoding.UTF8.GetBytes(
        "{\n  \"signer\": \"" + Signer + "\",\n  \"signature\": \"" + Convert.ToBase64String(Signature) + "\"\n}\n");

    private static RuleSetException Bad(string message, Exception? inner = null) => new(RuleSetErrorKind.Signature, "", message, inner);
}
