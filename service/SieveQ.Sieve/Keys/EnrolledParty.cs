namespace SieveQ.Sieve.Keys;

/// <summary>
/// A sender or a receiver enrolled through the ordering: what the agreed enrolment-change table holds for a live id
/// (a revoked id holds nothing). Both roles carry the same keys: a signature key (messages and ACKREQs for a sender,
/// acknowledgements and subscriptions for a receiver) and an agreement key (its MAC keys).
/// </summary>
public sealed record EnrolledParty(int Id, bool Receiver, string Name, byte[] SignaturePublicKey, byte[] AgreementPublicKey)
{
    public string Role => Receiver ? "receiver" : "sender";

    public EnrolledSender AsSender() => new(Id, Name, SignaturePublicKey, AgreementPublicKey);

    public EnrolledReceiver AsReceiver() => new(Id, Name, SignaturePublicKey, AgreementPublicKey);

    public static EnrolledParty Of(EnrolledSender sender)
    {
        ArgumentNullException.ThrowIfNull(sender);
        return new(sender.Id, false, sender.Name, sender.SignaturePublicKey, sender.AgreementPublicKey);
    }
}
