using System.Security.Cryptography;
using System.Text.Json;
using System.Text.Json.Serialization;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Hosting.Keys;

namespace SieveQ.Deployment;

/// <summary>
/// A sender's or receiver's request to be enrolled, written by its own host (the administrator picks the role when
/// enrolling it): its name, both public keys (DER
/// SubjectPublicKeyInfo, base64 in JSON) and its proof of possession (<see cref="EnrolmentProof"/>). The private keys
/// stay in the host's key store (owner-only PEM files <c>{name}-sign.pem</c> and <c>{name}-agree.pem</c>).
/// </summary>
public sealed record PartyEnrolmentRequest(string Name, byte[] SignaturePublicKey, byte[] AgreementPublicKey, byte[] Proof)
{
    /// <summary>A request file is a few hundred bytes; anything much larger is not one.</summary>
    public const int MaxFileBytes = 16 * 1024;

    public static string FileName(string name) => $"{name}.enrol-request.json";

    /// <summary>Creates the party's key pairs in <paramref name="keyDirectory"/> (refusing to replace existing keys) and its signed request.</summary>
    public static PartyEnrolmentRequest Create(string keyDirectory, string name)
    {
        if (EnrolmentProof.NameProblem(name) is { } problem)
        {
            throw new DeploymentException(problem);
        }
        Directory.CreateDirectory(keyDirectory);
        var store = new PemFileKeyStore(keyDirectory);
        if (store.Exists(name + "-sign") || store.Exists(name + "-agree"))
        {
            throw new DeploymentException($"keys for '{name}' exist in {keyDirectory}; refusing to replace them");
        }
        using var signing = store.GetOrCreateSigningKey(name + "-sign");
        store.GetOrCreateAgreementKey(name + "-agree").Dispose();
        var signingSpki = store.ExportPublicKey(name + "-sign");
        var agreementSpki = store.ExportPublicKey(name + "-agree");
        return new PartyEnrolmentRequest(name, signingSpki, agreementSpki, EnrolmentProof.Sign(name, signingSpki, agreementSpki, signing));
    }

    public PartyEnrolmentClaim Claim() => new(Name, SignaturePublicKey, AgreementPublicKey, Proof);

    public string ToJson() => JsonSerializer.Serialize(this, PartyEnrolmentRequestJson.Default.PartyEnrolmentRequest);

    /// <summary>Reads and checks a request (structure, keys, proof of possession); a bad one is a <see cref="DeploymentException"/> naming why.</summary>
    public static PartyEnrolmentRequest Load(string path)
    {
        var info = new FileInfo(path);
        if (!info.Exists)
        {
            throw new DeploymentException($"no enrolment request at {path}");
        }
        if (info.Length > MaxFileBytes)
        {
            throw new DeploymentException($"{path} is {info.Length} bytes; an enrolment request is at most {MaxFileBytes}");
        }
        return Parse(File.ReadAllText(path), path);
    }

    /// <summary>Reads and checks a request's JSON (as <see cref="Load"/> does a file's); <paramref name="source"/> names it in errors.</summary>
    public static PartyEnrolmentRequest Parse(string json, string source)
    {
        ArgumentNullException.ThrowIfNull(json);
        if (json.Length > MaxFileBytes)
        {
            throw new DeploymentException($"{source} is {json.Length} characters; an enrolment request is at most {MaxFileBytes}");
        }
        PartyEnrolmentRequest? request;
        try
        {
            request = JsonSerializer.Deserialize(json, PartyEnrolmentRequestJson.Default.PartyEnrolmentRequest);
        }
        catch (JsonException e)
        {
            throw new DeploymentException($"{source} is not an enrolment request: {e.Message}", e);
        }
        if (request is null || request.Name is null || request.SignaturePublicKey is null || request.AgreementPublicKey is null || request.Proof is null)
        {
            throw new DeploymentException($"{source}: an enrolment request needs name, signaturePublicKey, agreementPublicKey and proof");
        }
        if (request.SignaturePublicKey.Length > EnrolmentProof.MaxKeyBytes || request.AgreementPublicKey.Length > EnrolmentProof.MaxKeyBytes)
        {
            throw new DeploymentException($"{source}: public keys are at most {EnrolmentProof.MaxKeyBytes} bytes");
        }
        if (EnrolmentProof.Problem(request.Claim()) is { } problem)
        {
            throw new DeploymentException($"{source}: {problem}");
        }
        return request;
    }

    /// <summary>Whether the request's signing key is <paramref name="key"/>'s public half.</summary>
    public bool IsSignedBy(ECDsa key)
    {
        ArgumentNullException.ThrowIfNull(key);
        return CryptographicOperations.FixedTimeEquals(SignaturePublicKey, key.ExportSubjectPublicKeyInfo());
    }
}

[JsonSourceGenerationOptions(WriteIndented = true, PropertyNamingPolicy = JsonKnownNamingPolicy.CamelCase)]
[JsonSerializable(typeof(PartyEnrolmentRequest))]
internal sealed partial class PartyEnrolmentRequestJson : JsonSerializerContext;
