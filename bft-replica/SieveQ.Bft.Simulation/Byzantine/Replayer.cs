using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>
/// Sends old messages again: its own (valid but stale), other replicas' (the link must refuse
/// them), old client requests forwarded to the leader, and, as leader, proposals padded with
/// requests that were probably executed already. Nothing may execute twice.
/// </summary>
internal sealed class Replayer(ByzantineContext ctx) : ByzantineBehaviour(ctx)
{
    private readonly SubstitutionMap _subs = new(ctx);
    private readonly ProposalChoices _choices = new();

    public override void OnOutput(Outgoing o, List<Outgoing> sink)
    {
        switch (o.Message)
        {
            case Propose p when p.From == Ctx.Self:
                {
                    var padded = Pad(p);
                    if (padded is not null)
                    {
                        _subs.Add(p.Regency, p.ConsensusId, o.To, p.Value.Hash, padded.Hash);
                        sink.Add(o with { Message = p with { Value = padded } });
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

    public override void OnTick(List<Outgoing> sink)
    {
        if (!Ctx.Rng.Chance(0.5))
        {
            return;
        }
        var own = Ctx.Outbound.Where(m => m is not ClientRequest).ToList();
        if (own.Count > 0)
        {
            Ctx.Count("replay.own");
            sink.Add(new Outgoing(Ctx.RandomOtherReplica(), Ctx.Rng.Pick(own), null));
        }
        var foreign = Ctx.Inbound.Where(m => m is not ClientRequest && m.From != Ctx.Self).ToList();
        if (foreign.Count > 0)
        {
            Ctx.Count("replay.foreign");
            sink.Add(new Outgoing(Ctx.RandomOtherReplica(), Ctx.Rng.Pick(foreign), null));
        }
        var requests = OldRequests(4);
        if (requests.Count > 0)
        {
            Ctx.Count("replay.forward");
            var forward = new Forward(Ctx.Self, requests);
            sink.Add(new Outgoing(Ctx.Leader == Ctx.Self ? Ctx.RandomOtherReplica() : Ctx.Leader, forward, null));
            sink.Add(new Outgoing(Ctx.RandomOtherReplica(), forward, null));
        }
    }

    private List<ClientRequest> OldRequests(int max)
    {
        var all = Ctx.Inbound.OfType<ClientRequest>().ToList();
        var picked = new List<ClientRequest>();
        for (var i = 0; i < max && all.Count > 0; i++)
        {
            var r = Ctx.Rng.Pick(all);
            if (!picked.Any(x => x.Id == r.Id))
            {
                picked.Add(r);
            }
        }
        return picked;
    }

    private Batch? Pad(Propose p) => _choices.For(p, PaddedOrNone);

    private Batch? PaddedOrNone(Propose p)
    {
        Batch? b = null;
        if (Ctx.Rng.Chance(0.5))
        {
            var extra = OldRequests(3).Where(r => !p.Value.Requests.Any(x => x.Id == r.Id)).ToList();
            if (extra.Count > 0)
            {
                b = new Batch(p.Value.Timestamp, [.. p.Value.Requests, .. extra]);
                Ctx.Count("replay.proposal-padded");
            }
        }
        return b;
    }
}
