using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Sender;

/// <summary>
/// What the replicas said in ACKRES, believed only where f+1 of them agree (at least one is correct):
/// the acknowledged prefix is the (f+1)-th highest of each replica's latest claim, and a pre-SQ
/// reassignment is obeyed once f+1 replicas name the same pre-SQ for the same ACKREQ.
/// </summary>
internal sealed class AckResponseTally
{
    private readonly int _f;
    private readonly long[] _deliveredByReplica;
    private readonly Dictionary<long, Dictionary<int, AckResponse>> _byNonce = [];

    public AckResponseTally(int f)
    {
        _f = f;
        _deliveredByReplica = new long[3 * f + 1];
    }

    public int ReplicaCount => _deliveredByReplica.Length;

    /// <summary>Records one verified ACKRES; returns the agreed (assigned pre-SQ, loss ppm) for its nonce once f+1 agree.</summary>
    public (int AssignedPreSq, int LossPpm)? Add(AckResponse r)
    {
        _deliveredByReplica[r.Replica] = Math.Max(_deliveredByReplica[r.Replica], r.DeliveredUpTo);
        if (!_byNonce.TryGetValue(r.Nonce, out var votes))
        {
            votes = [];
            _byNonce[r.Nonce] = votes;
        }
        // First answer of a replica for a nonce counts; a second, different one is ignored.
        votes.TryAdd(r.Replica, r);
        var agreeing = votes.Values.Count(v => v.AssignedPreSq == r.AssignedPreSq);
        if (agreeing < _f + 1)
        {
            return null;
        }
        var losses = votes.Values.Where(v => v.AssignedPreSq == r.AssignedPreSq).Select(v => v.LossPpm).Order().ToArray();
        // The median of the agreeing replicas' loss figures; f liars cannot move it past a correct value.
        return (r.AssignedPreSq, losses[losses.Length / 2]);
    }

    /// <summary>The highest prefix that at least f+1 replicas claim.</summary>
    public long AcknowledgedUpTo
    {
        get
        {
            var sorted = _deliveredByReplica.OrderDescending().ToArray();
            return sorted[_f];
        }
    }

    /// <summary>Forgets votes for nonces that can no longer matter.</summary>
    public void ForgetBelow(long nonce)
    {
        foreach (var n in _byNonce.Keys.Where(k => k < nonce).ToList())
        {
            _byNonce.Remove(n);
        }
    }
}
