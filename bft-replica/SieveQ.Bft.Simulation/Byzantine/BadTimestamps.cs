using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>
/// As leader, stamps most proposals with a time far in the future, far in the past, or before
/// the last decided timestamp, and signs WRITEs for them. Correct replicas must refuse them and
/// replace the leader; no decided timestamp may go back or run ahead of correct clocks.
/// </summary>
internal sealed class BadTimestamps(ByzantineContext ctx) : ByzantineBehaviour(ctx)
{
    private readonly SubstitutionMap _subs = new(ctx);
    private readonly ProposalChoices _choices = new();

    public override void OnOutput(Outgoing o, List<Outgoing> sink)
    {
        switch (o.Message)
        {
            case Propose p when p.From == Ctx.Self:
                {
                    var bad = Choose(p);
                    if (bad is not null)
                    {
                        _subs.Add(p.Regency, p.ConsensusId, o.To, p.Value.Hash, bad.Hash);
                        sink.Add(o with { Message = p with { Value = bad } });
                        return;
                    }
                    break;
                }
            case Write or Accept:
                sink.Add(o with { Message = _subs.Rewrite(o.To, o.Message) });
                return;
        }
        sink.Add(o);
    }

    private Batch? Choose(Propose p) => _choices.For(p, BadOrHonest);

    private Batch? BadOrHonest(Propose p)
    {
        var skew = Ctx.Config.TimestampSkewMs;
        var ts = p.Value.Timestamp;
        var (mode, b) = Ctx.Rng.Next(5) switch
        {
            0 => ("honest", null),
            1 => ("far-future", new Batch(ts + Ctx.Rng.Range(skew * 2, skew * 50), p.Value.Requests)),
            2 => ("far-past", new Batch(ts - Ctx.Rng.Range(skew * 2, skew * 50), p.Value.Requests)),
            3 => ("backwards", new Batch(Math.Min(ts, Ctx.Core?.LastDecidedTimestamp ?? ts) - Ctx.Rng.Range(1, skew / 2), p.Value.Requests)),
            _ => ("just-beyond-skew", new Batch(ts + skew + Ctx.Rng.Range(60, 120), p.Value.Requests)),
        };
        Ctx.Count($"bad-timestamp.{mode}");
        return b;
    }
}
