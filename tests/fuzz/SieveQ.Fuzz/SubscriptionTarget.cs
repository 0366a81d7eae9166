using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Fuzz;

/// <summary>
/// <see cref="SubscriptionCodec"/> as the replica-SQ's subscription check uses it: decode, then judge
/// addressee, freshness and signature. Input: a byte choosing the kind (even: receiver, odd: pre-SQ),
/// then the subscription. Refusal: <see cref="MalformedEnvelopeException"/>; judging never throws.
/// </summary>
internal sealed class SubscriptionTarget : FuzzTarget
{
    private const long Now = 1_750_000_000_000;
    private readonly ECDsa _key = ECDsa.Create(ECCurve.NamedCurves.nistP256);

    public override string Name => "subscription";

    public override void Run(byte[] input)
    {
        Outcome = "accepted";
        if (input.Length == 0)
        {
            Refused("empty");
            return;
        }
        var kind = input[0] % 2 == 0 ? StructureKind.ReceiverSubscription : StructureKind.PreSqSubscription;
        ReadOnlyMemory<byte> bytes = input.AsMemory(1);
        Subscription s;
        try
        {
            s = SubscriptionCodec.Decode(bytes, kind);
        }
        catch (MalformedEnvelopeException e)
        {
            Refused(e);
            return;
        }
        if (s.SignedRegion.Length != SubscriptionCodec.SignedBytes || s.Signature.Length != EnvelopeLimits.SignatureBytes || bytes.Length != SubscriptionCodec.SignedBytes + EnvelopeLimits.SignatureBytes)
        {
            throw new ContractViolation($"decoded a subscription of {bytes.Length} bytes into regions of {s.SignedRegion.Length} and {s.Signature.Length}");
        }
        // Canonical: the signed region is exactly what the encoder writes for the decoded fields.
        var again = SubscriptionCodec.Encode(s.Kind, s.Subscriber, s.Replica, s.TimeMs, _key);
        if (!again.AsSpan(0, SubscriptionCodec.SignedBytes).SequenceEqual(s.SignedRegion.Span))
        {
            throw new ContractViolation("decoded fields re-encode to a different signed region");
        }
        foreach (var now in (long[])[Now, 0, long.MaxValue / 2])
        {
            _ = SubscriptionCodec.IsValid(s, s.Replica, now, 30_000, (data, sig) => _key.VerifyData(data.Span, sig.Span, HashAlgorithmName.SHA256));
        }
    }

    public override IEnumerable<byte[]> Seeds()
    {
        yield return [0, .. SubscriptionCodec.Encode(StructureKind.ReceiverSubscription, 100, 2, Now, _key)];
        yield return [1, .. SubscriptionCodec.Encode(StructureKind.PreSqSubscription, 10, 0, Now, _key)];
        yield return [0, .. SubscriptionCodec.Encode(StructureKind.ReceiverSubscription, int.MaxValue, 0, long.MaxValue, _key)];
    }
}
