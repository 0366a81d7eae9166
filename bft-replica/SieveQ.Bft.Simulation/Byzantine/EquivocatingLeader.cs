using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>
/// As leader, sends one valid proposal to one half of the replicas and another valid proposal to
/// the other half, signing WRITEs for both; as follower, sometimes tells some peers it wrote a
/// different hash. Correct replicas must never decide two values for one instance.
/// </summary>
internal sealed class EquivocatingLeader(ByzantineContext ctx) : ByzantineBehaviour(ctx)
{
    private readonly SubstitutionMap _subs = new(ctx);
    private readonly Dictionary<(int Regency, long Cid), (HashSet<int> Other, Batch Value)> _split = [];

    public override void OnOutput(Outgoing o, List<Outgoing> sink)
    {
        switch (o.Message)
        {
            case Propose p when p.From == Ctx.Self:
                {
                    var (other, alt) = SplitFor(p);
                    if (other.Contains(o.To))
                    {
                        _subs.Add(p.Regency, p.ConsensusId, o.To, p.Value.Hash, alt.Hash);
                        Ctx.Count("equivocate.proposal");
                        sink.Add(o with { Message = p with { Value = alt } });
                        return;
                    }
                    break;
                }
            case Write w when !Ctx.IsLeader && Ctx.Rng.Chance(0.2):
                {
                    var h = Ctx.RandomDigest();
                    Ctx.Count("equivocate.write");
                    sink.Add(o with { Message = new Write(w.From, w.Regency, w.ConsensusId, h, Ctx.SignWrite(w.Regency, w.ConsensusId, h)) });
                    return;
                }
            case Write or Accept:
                sink.Add(o with { Message = _subs.Rewrite(o.To, o.Message) });
                return;
        }
        sink.Add(o);
    }

    private (HashSet<int> Other, Batch Value) SplitFor(Propose p)
    {
        var key = (p.Regency, p.ConsensusId);
        if (!_split.TryGetValue(key, out var split))
        {
            if (_split.Count > 64)
            {
                _split.Clear();
            }
            var others = Ctx.OtherReplicas().ToList();
            Ctx.Rng.Shuffle(others);
            split = (others.Take(Math.Max(1, others.Count / 2 + Ctx.Rng.Next(2))).ToHashSet(), Ctx.ValidAlternative(p.Value));
            _split[key] = split;
        }
        return split;
    }
}
