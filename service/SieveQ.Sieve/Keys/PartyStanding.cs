namespace SieveQ.Sieve.Keys;

/// <summary>Whether an id names an enrolled party now.</summary>
public enum PartyStandingState
{
    NotEnrolled,
    Enrolled,

    /// <summary>Revoked through the ordering; the id is never enrolled again.</summary>
    Revoked,
}

/// <summary>
/// A sender's or receiver's enrolment as one replica applied it: its state and, when enrolled, its name and public keys
/// (SubjectPublicKeyInfo). What a client checks its own keys against before it starts.
/// </summary>
public sealed record PartyStanding(PartyStandingState State, string Name, byte[] SignaturePublicKey, byte[] AgreementPublicKey, bool ThroughOrdering)
{
    public static readonly PartyStanding NotEnrolled = new(PartyStandingState.NotEnrolled, "", [], [], ThroughOrdering: false);

    /// <summary>
    /// A sender's routes now, when the replicas run fixed routes (ascending by receiver); null when a rule set decides
    /// where it may send, or for a receiver.
    /// </summary>
    public IReadOnlyList<Replica.Route>? Routes { get; init; }

    /// <summary>Same state, name, keys and routes.</summary>
    public bool SameAs(PartyStanding other)
    {
        ArgumentNullException.ThrowIfNull(other);
        return State == other.State && Name == other.Name && ThroughOrdering == other.ThroughOrdering
            && SignaturePublicKey.AsSpan().SequenceEqual(other.SignaturePublicKey) && AgreementPublicKey.AsSpan().SequenceEqual(other.AgreementPublicKey)
            && (Routes is null ? other.Routes is null : other.Routes is not null && Routes.SequenceEqual(other.Routes));
    }
}
