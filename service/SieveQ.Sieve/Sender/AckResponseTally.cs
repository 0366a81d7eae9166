using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Sender;

/// <summary>
/// What the replicas said in ACKRES, believed only where f+1 of them agree (at least one is correct). Correct
/// replicas answer an ACKREQ at the same point of the agreed order, so their answers to one nonce are identical: a
/// statement (acknowledged prefix, verdicts, assigned pre-SQ) is taken once f+1 replicas made it for the same nonce.
/// The acknowledged prefix is the highest such statement's, and the verdicts of the messages it acknowledges come
/// from that same statement, so no message is acknowledged without the verdict the replicas agreed on.
/// </summary>
internal sealed class AckResponseTally
{
    private readonly int _f;
    private readonly Dictionary<long, Dictionary<int, AckResponse>> _byNonce = [];

    public AckResponseTally(int f)
    {
        _f = f;
        ReplicaCount = 3 * f + 1;
    }

    public int ReplicaCount { get; }

    /// <summary>The statement behind <see cref="AcknowledgedUpTo"/> (null before any).</summary>
    public AckResponse? Agreed { get; private set; }

    /// <summary>Records one verified ACKRES; returns the agreed (assigned pre-SQ, loss ppm) for its nonce once f+1 agree.</summary>
    public (int AssignedPreSq, int LossPpm)? Add(AckResponse r)
    {
        if (!_byNonce.TryGetValue(r.Nonce, out var votes))
        {
            votes = [];
            _byNonce[r.Nonce] = votes;
        }
        // First answer of a replica for a nonce counts; a second, different one is ignored.
        votes.TryAdd(r.Replica, r);
        var agreeing = votes.Values.Where(v => v.SameStatement(r)).ToList();
        if (agreeing.Count < _f + 1)
        {
            return null;
        }
        if (Agreed is null || r.DeliveredUpTo > Agreed.DeliveredUpTo)
        {
            Agreed = r;
        }
        var losses = agreeing.Select(v => v.LossPpm).Order().ToArray();
        // The median of the agreeing replicas' loss figures; f liars cannot move it past a correct value.
        return (r.AssignedPreSq, losses[losses.Length / 2]);
    }

    /// <summary>The highest prefix f+1 replicas stated in answer to the same ACKREQ.</summary>
    public long AcknowledgedUpTo => Agreed?.DeliveredUpTo ?? 0;

    /// <summary>Forgets votes for nonces that can no longer matter.</summary>
    public void ForgetBelow(long nonce)
    {
        foreach (var n in _byNonce.Keys.Where(k => k < nonce).ToList())
        {
            _byNonce.Remove(n);
        }
    }
}
