using System.Text.Json;
using System.Text.Json.Serialization;

namespace SieveQ.Sieve.Keys;

/// <summary>
/// An endpoint that sends through SieveQ. Public keys are SubjectPublicKeyInfo DER (base64 in JSON).
/// The signature key signs messages and ACKREQs; the agreement key derives its MAC keys.
/// </summary>
public sealed record EnrolledSender(int Id, string Name, byte[] SignaturePublicKey, byte[] AgreementPublicKey);

/// <summary>A receiver signs its acknowledgements (they are ordered) and agrees MAC keys with replicas.</summary>
public sealed record EnrolledReceiver(int Id, string Name, byte[] SignaturePublicKey, byte[] AgreementPublicKey);

/// <summary>A pre-SQ; its id is its ordering-client id.</summary>
public sealed record EnrolledPreSq(int Id, string Name, byte[] AgreementPublicKey);

/// <summary>A replica-SQ; its id is its ordering replica id (0..n-1).</summary>
public sealed record EnrolledReplica(int Id, string Name, byte[] AgreementPublicKey);

/// <summary>
/// Who is enrolled: the controller's record, given identically to every replica (it is part of the
/// replicated configuration, so it is never read from a local file mid-run). An endpoint that both
/// sends and receives appears in both lists under the same id.
/// </summary>
public sealed record Enrolment(
    int F,
    IReadOnlyList<EnrolledSender> Senders,
    IReadOnlyList<EnrolledReceiver> Receivers,
    IReadOnlyList<EnrolledPreSq> PreSqs,
    IReadOnlyList<EnrolledReplica> Replicas)
{
    public int ReplicaCount => 3 * F + 1;

    public string ToJson() => JsonSerializer.Serialize(this, EnrolmentJsonContext.Default.Enrolment);

    /// <summary>Parses and validates; a bad document is a <see cref="FormatException"/>.</summary>
    public static Enrolment FromJson(string json)
    {
        var e = ParseWithoutValidation(json);
        e.Validate();
        return e;
    }

    /// <summary>For tools that build an enrolment one endpoint at a time: parsed, not yet complete or checked.</summary>
    public static Enrolment ParseWithoutValidation(string json)
    {
        Enrolment? e;
        try
        {
            e = JsonSerializer.Deserialize(json, EnrolmentJsonContext.Default.Enrolment);
        }
        catch (JsonException ex)
        {
            throw new FormatException("enrolment is not valid JSON", ex);
        }
        if (e is null)
        {
            throw new FormatException("enrolment is empty");
        }
        return e;
    }

    public void Validate()
    {
        if (F is < 0 or > 100 || Senders is null || Receivers is null || PreSqs is null || Replicas is null)
        {
            throw new FormatException("enrolment needs f >= 0 and all four lists");
        }
        if (Senders.Any(x => x is null) || Receivers.Any(x => x is null) || PreSqs.Any(x => x is null) || Replicas.Any(x => x is null))
        {
            throw new FormatException("enrolment lists must not contain null entries");
        }
        if (Replicas.Count != ReplicaCount || Replicas.Select(r => r.Id).Order().SequenceEqual(Enumerable.Range(0, ReplicaCount)) is false)
        {
            throw new FormatException($"enrolment needs replicas 0..{ReplicaCount - 1} for f = {F}");
        }
        Unique(Senders.Select(s => s.Id), "sender");
        Unique(Receivers.Select(s => s.Id), "receiver");
        Unique(PreSqs.Select(s => s.Id), "pre-SQ");
        if (Senders.Any(s => s.Id < 0 || s.SignaturePublicKey is null || s.AgreementPublicKey is null)
            || Receivers.Any(s => s.Id < 0 || s.SignaturePublicKey is null || s.AgreementPublicKey is null)
            || PreSqs.Any(s => s.Id < 0 || s.AgreementPublicKey is null)
            || Replicas.Any(s => s.AgreementPublicKey is null))
        {
            throw new FormatException("enrolment entries need non-negative ids and their public keys");
        }
    }

    private static void Unique(IEnumerable<int> ids, string what)
    {
        var seen = new HashSet<int>();
        foreach (var id in ids)
        {
            if (!seen.Add(id))
            {
                throw new FormatException($"{what} id {id} enrolled twice");
            }
        }
    }
}

[JsonSourceGenerationOptions(WriteIndented = true, PropertyNamingPolicy = JsonKnownNamingPolicy.CamelCase)]
[JsonSerializable(typeof(Enrolment))]
internal sealed partial class EnrolmentJsonContext : JsonSerializerContext;
