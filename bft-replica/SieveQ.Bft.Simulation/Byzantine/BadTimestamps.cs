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
    private readonly Dictionary<(int Regency, long Cid), Batch?> _chosen = [];

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

    private Batch? Choose(Propose p)
    {
        var key = (p.Regency, p.ConsensusId);
        if (_chosen.TryGetValue(key, out var b))
        {
            return b;
        }
        if (_chosen.Count > 64)
        {
            _chosen.Clear();
        }
        var skew = Ctx.Config.TimestampSkewMs;
        var ts = p.Value.Timestamp;
        string mode;
        (mode, b) = Ctx.Rng.Next(5) switch
        {
            0 => ("honest", null),
            1 => ("far-future", new Batch(ts + Ctx.Rng.Range(skew * 2, skew * 50), p.Value.Requests)),
            2 => ("far-past", new Batch(ts - Ctx.Rng.Range(skew * 2, skew * 50), p.Value.Requests)),
            3 => ("backwards", new Batch(Math.Min(ts, Ctx.Core?.LastDecidedTimestamp ?? ts) - Ctx.Rng.Range(1, skew / 2), p.Value.Requests)),
            _ => ("just-beyond-skew", new Batch(ts + skew + Ctx.Rng.Range(60, 120), p.Value.Requests)),
        };
        Ctx.Count($"bad-timestamp.{mode}");
        _chosen[key] = b;
        return b;
    }
}
