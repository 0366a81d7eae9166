using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Replica;

/// <summary>Why a lease request cannot be decided on, as far as the request alone shows.</summary>
public enum IdLeaseProblem
{
    None,
    NotEnrolled,
    NotSigned,
    Stale,
}

/// <summary>
/// The checks a lease request passes before anyone decides on it: the party enrolled, the signature under its enrolled
/// key, the claimed time within <see cref="IdLeaseTable.FreshnessMs"/> of a clock. The replicas apply them in agreed
/// execution against the agreed directory and time; a pre-SQ applies the same ones first, against its own.
/// </summary>
public static class IdLeaseCheck
{
    /// <param name="clock">What <paramref name="nowMs"/> is, for the reason ("the agreed time", "this pre-SQ's clock").</param>
    public static (IdLeaseProblem Problem, string Reason) Judge(IdLeaseRequest q, PublicKeyDirectory keys, long nowMs, string clock)
    {
        ArgumentNullException.ThrowIfNull(q);
        ArgumentNullException.ThrowIfNull(keys);
        var sender = q.Party == LeaseParty.Sender;
        var name = sender ? "sender" : "receiver";
        if (!(sender ? keys.IsSender(q.Id) : keys.IsReceiver(q.Id)))
        {
            return (IdLeaseProblem.NotEnrolled, $"{name} {q.Id} is not enrolled");
        }
        var signed = IdLeaseCodec.SignedBytes(q);
        if (!(sender ? keys.VerifySender(q.Id, signed, q.Signature.Span) : keys.VerifyReceiver(q.Id, signed, q.Signature.Span)))
        {
            return (IdLeaseProblem.NotSigned, $"the request is not signed by {name} {q.Id}'s enrolled key");
        }
        // Compared without subtracting the claimed time, which may be anything.
        if (q.RequestedAtMs < nowMs - IdLeaseTable.FreshnessMs || q.RequestedAtMs > nowMs + IdLeaseTable.FreshnessMs)
        {
            return (IdLeaseProblem.Stale,
                $"the request's time ({q.RequestedAtMs} ms) is more than {IdLeaseTable.FreshnessMs / 1000} s from {clock} ({nowMs} ms): check this host's clock");
        }
        return (IdLeaseProblem.None, "");
    }
}
