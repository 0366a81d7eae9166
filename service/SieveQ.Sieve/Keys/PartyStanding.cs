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

    /// <summary>Same state and keys (the name and how it was enrolled follow from the keys' enrolment).</summary>
    public bool SameAs(PartyStanding other)
    {
        ArgumentNullException.ThrowIfNull(other);
        return State == other.State && Name == other.Name && ThroughOrdering == other.ThroughOrdering
            && SignaturePublicKey.AsSpan().SequenceEqual(other.SignaturePublicKey) && AgreementPublicKey.AsSpan().SequenceEqual(other.AgreementPublicKey);
    }
}
