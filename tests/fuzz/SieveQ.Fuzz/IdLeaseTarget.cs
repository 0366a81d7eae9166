using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Fuzz;

/// <summary>
/// <see cref="IdLeaseCodec"/> as a pre-SQ and the replicas read a lease request (first byte even) and as a client reads
/// the agreed result (odd). Refusal: <see cref="MalformedEnvelopeException"/>. What decodes must be canonical: a request's
/// fields re-encode to its signed region, a result's to its bytes.
/// </summary>
internal sealed class IdLeaseTarget : FuzzTarget
{
    private const long Now = 1_750_000_000_000;
    private readonly ECDsa _key = ECDsa.Create(ECCurve.NamedCurves.nistP256);

    public override string Name => "id-lease";

    public override void Run(byte[] input)
    {
        Outcome = "accepted";
        if (input.Length == 0)
        {
            Refused("empty");
            return;
        }
        ReadOnlyMemory<byte> bytes = input.AsMemory(1);
        try
        {
            if (input[0] % 2 == 0)
            {
                var q = IdLeaseCodec.DecodeRequest(bytes);
                var again = IdLeaseCodec.EncodeRequest(q.Party, q.Id, q.Op, q.Holder.Span, q.Label, q.RequestedAtMs, _key);
                if (!again.AsSpan(0, q.SignedRegion.Length).SequenceEqual(q.SignedRegion.Span) || again.Length != bytes.Length)
                {
                    throw new ContractViolation("a decoded lease request re-encodes to a different signed region");
                }
            }
            else
            {
                var r = IdLeaseCodec.DecodeResult(bytes);
                if (!IdLeaseCodec.EncodeResult(r).AsSpan().SequenceEqual(bytes.Span))
                {
                    throw new ContractViolation("a decoded lease result re-encodes differently");
                }
            }
        }
        catch (MalformedEnvelopeException e)
        {
            Refused(e);
        }
    }

    public override IEnumerable<byte[]> Seeds()
    {
        var holder = new byte[IdLeaseCodec.HolderBytes];
        yield return [0, .. IdLeaseCodec.EncodeRequest(LeaseParty.Sender, 7, LeaseOp.Hold, holder, "host pid 1 app, state /var/lib/app", Now, _key)];
        yield return [2, .. IdLeaseCodec.EncodeRequest(LeaseParty.Receiver, 100, LeaseOp.Release, holder, "", Now, _key)];
        yield return [1, .. IdLeaseCodec.EncodeResult(new IdLeaseResult(LeaseOutcome.HeldByOther, LeaseParty.Sender, 7, Now, holder, "other host", "sender 7 is held", 41))];
        yield return [3, .. IdLeaseCodec.EncodeResult(new IdLeaseResult(LeaseOutcome.Refused, LeaseParty.Receiver, 0, 0, ReadOnlyMemory<byte>.Empty, "", "not enrolled"))];
    }
}
