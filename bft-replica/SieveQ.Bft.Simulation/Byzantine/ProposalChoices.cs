using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>
/// A lying leader's one choice per instance (a substitute batch, or null for the honest one), made once and told
/// alike to every replica it sends the PROPOSE to: a lie to all, not equivocation. Bounded: old instances are
/// forgotten wholesale.
/// </summary>
internal sealed class ProposalChoices
{
    private const int Bound = 64;
    private readonly Dictionary<(int Regency, long Cid), Batch?> _chosen = [];

    public Batch? For(Propose p, Func<Propose, Batch?> choose)
    {
        var key = (p.Regency, p.ConsensusId);
        if (_chosen.TryGetValue(key, out var b))
        {
            return b;
        }
        if (_chosen.Count > Bound)
        {
            _chosen.Clear();
        }
        b = choose(p);
        _chosen[key] = b;
        return b;
    }
}
