using SieveQ.Sieve.Envelope;

namespace SieveQ.Fuzz;

/// <summary>
/// <see cref="ExecuteResultCodec"/> as the pre-SQ's ordering forwarder uses it on the bytes f+1 replicas agreed on:
/// its untaken list unmarks messages and its quarantine holds refuse senders at check (a), so what it accepts must be
/// exactly what the replicas' encoder writes. Refusal: <see cref="MalformedEnvelopeException"/>.
/// </summary>
internal sealed class ExecuteResultTarget : FuzzTarget
{
    public override string Name => "execute-result";

    public override void Run(byte[] input)
    {
        Outcome = "accepted";
        ExecuteResult r;
        try
        {
            r = ExecuteResultCodec.Decode(input);
        }
        catch (MalformedEnvelopeException e)
        {
            Refused(e);
            return;
        }
        if (r.Untaken.Count > ExecuteResultCodec.MaxUntaken || r.Quarantined.Count > ExecuteResultCodec.MaxQuarantineHolds)
        {
            throw new ContractViolation($"decoded {r.Untaken.Count} untaken and {r.Quarantined.Count} holds, above the bounds");
        }
        for (var i = 0; i < r.Quarantined.Count; i++)
        {
            var h = r.Quarantined[i];
            if (h.HoldMs is < 0 or > ExecuteResultCodec.MaxHoldMs || (i > 0 && h.Sender <= r.Quarantined[i - 1].Sender))
            {
                throw new ContractViolation($"accepted hold {h} out of order or out of range");
            }
        }
        // Canonical: one result, one encoding.
        if (!ExecuteResultCodec.Encode(r).AsSpan().SequenceEqual(input))
        {
            throw new ContractViolation("an accepted result re-encodes to other bytes");
        }
    }

    public override IEnumerable<byte[]> Seeds()
    {
        yield return ExecuteResultCodec.Encode(new ExecuteResult(3, 1, 2));
        yield return ExecuteResultCodec.Encode(new ExecuteResult(0, 0, 2) { Untaken = [new(1, 5), new(7, 1L << 40)] });
        yield return ExecuteResultCodec.Encode(new ExecuteResult(1, 0, 4) { Untaken = [new(4, 9)], Quarantined = [new(2, 50), new(9, ExecuteResultCodec.MaxHoldMs)] });
    }
}
