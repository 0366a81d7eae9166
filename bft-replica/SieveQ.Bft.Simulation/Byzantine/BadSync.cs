using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>
/// As the new leader, justifies its regency with a SYNC that is wrong in one way per receiver:
/// another value or instance than the evidence dictates, too little evidence, a signer counted
/// twice, tampered or forged evidence, the wrong regency, a prior value the evidence does not bind. Correct replicas must re-derive the
/// choice, refuse, and move on to the next regency.
/// </summary>
internal sealed class BadSync(ByzantineContext ctx) : ByzantineBehaviour(ctx)
{
    public override void OnOutput(Outgoing o, List<Outgoing> sink)
    {
        if (o.Message is not Sync s || !Ctx.Rng.Chance(0.9))
        {
            sink.Add(o);
            return;
        }
        var (variant, bad) = Corrupt(s);
        Ctx.Count($"bad-sync.{variant}");
        sink.Add(o with { Message = bad });
    }

    private (string Variant, Sync Bad) Corrupt(Sync s)
    {
        var rng = Ctx.Rng;
        var q = Ctx.Config.Quorum;
        switch (rng.Next(8))
        {
            case 0:
                {
                    var other = s.Value is { } v ? Ctx.ValidAlternative(v) : new Batch(Ctx.LocalNow, []);
                    return ("wrong-value", s with { Value = other });
                }
            case 1:
                return ("wrong-instance", s with { ConsensusId = Math.Max(1, s.ConsensusId + (rng.Chance(0.5) ? 1 : -1) * rng.Range(1, 3)) });
            case 2:
                return ("too-little-evidence", s with { Evidence = s.Evidence.Take(q - 1).ToArray() });
            case 3 when s.Evidence.Count >= 2:
                return ("repeated-evidence", s with { Evidence = [.. s.Evidence.Take(s.Evidence.Count - 1), s.Evidence[0]] });
            case 4 when s.Evidence.Count >= 1:
                {
                    var victim = rng.Next(s.Evidence.Count);
                    var tampered = s.Evidence.Select((e, i) => i == victim ? e with { LastDecided = e.LastDecided + 1 } : e).ToArray();
                    return ("tampered-evidence", s with { Evidence = tampered });
                }
            case 5:
                {
                    // Its own STOPDATA, re-signed with a progress claim nobody else vouches for, replacing another's.
                    var own = s.Evidence.FirstOrDefault(e => e.From == Ctx.Self);
                    if (own is null)
                    {
                        return ("no-value", s with { Value = null });
                    }
                    var inflated = Ctx.Resign(own with { LastDecided = own.LastDecided + rng.Range(5, 500), Certificates = [] });
                    var rest = s.Evidence.Where(e => e.From != Ctx.Self).Take(q - 1);
                    return ("inflated-evidence", s with { Evidence = [inflated, .. rest], ConsensusId = inflated.LastDecided + 1 });
                }
            case 6:
                {
                    var prior = s.PriorValue is { } pv && rng.Chance(0.5) ? Ctx.ValidAlternative(pv) : s.PriorValue is null ? new Batch(Ctx.LocalNow, []) : null;
                    return ("wrong-prior", s with { PriorValue = prior });
                }
            default:
                return ("wrong-regency", s with { Regency = s.Regency + Ctx.Config.N });
        }
    }
}
