using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>
/// Puts requests in other clients' names on every path a request travels besides its client's own link: in
/// FORWARDs to the leader and others, in its STOPs, and, as leader, in its PROPOSEs. The forgeries: a fresh
/// number with a made-up payload and proof; a genuine request renumbered, or with its payload changed, keeping
/// the genuine proof; a genuine proof passed off under another client's id. As leader it also reorders
/// a batch and withholds one client's requests from it (both allowed; both must stay safe and live). No forged
/// request may execute (the checker's validity), and correct replicas must refuse every message that carries
/// one before their cores see it.
/// </summary>
internal sealed class RequestForger(ByzantineContext ctx) : ByzantineBehaviour(ctx)
{
    private readonly SubstitutionMap _subs = new(ctx);
    private readonly ProposalChoices _choices = new();
    private readonly int _withheld = ctx.Assignment.CensoredClient;

    public override void OnOutput(Outgoing o, List<Outgoing> sink)
    {
        switch (o.Message)
        {
            case Propose p when p.From == Ctx.Self:
                if (Alter(p) is { } altered)
                {
                    _subs.Add(p.Regency, p.ConsensusId, o.To, p.Value.Hash, altered.Hash);
                    sink.Add(o with { Message = p with { Value = altered } });
                    return;
                }
                break;
            case Write or Accept:
                sink.Add(o with { Message = _subs.Rewrite(o.To, o.Message) });
                return;
            case Stop s when s.From == Ctx.Self && Ctx.Rng.Chance(0.3) && Forgeries(2) is { Count: > 0 } forged:
                Ctx.Count("forge-request.stop");
                sink.Add(o with { Message = s with { TimedOut = [.. s.TimedOut, .. forged] } });
                return;
            case Forward f when f.From == Ctx.Self && Ctx.Rng.Chance(0.3) && Forgeries(2) is { Count: > 0 } forged:
                Ctx.Count("forge-request.forward");
                sink.Add(o with { Message = f with { Requests = [.. f.Requests, .. forged] } });
                return;
        }
        sink.Add(o);
    }

    public override void OnTick(List<Outgoing> sink)
    {
        if (!Ctx.Rng.Chance(0.3) || Forgeries(3) is not { Count: > 0 } forged)
        {
            return;
        }
        Ctx.Count("forge-request.tick");
        var forward = new Forward(Ctx.Self, forged);
        sink.Add(new Outgoing(Ctx.IsLeader ? Ctx.RandomOtherReplica() : Ctx.Leader, forward, null));
        sink.Add(new Outgoing(Ctx.RandomOtherReplica(), forward, null));
    }

    /// <summary>One altered batch per instance, sent alike to every replica (a lie told to all, not equivocation).</summary>
    private Batch? Alter(Propose p) => _choices.For(p, AlteredOrNone);

    private Batch? AlteredOrNone(Propose p)
    {
        var requests = p.Value.Requests;
        return Ctx.Rng.Next(4) switch
        {
            0 when Forgeries(2) is { Count: > 0 } forged => Count("forge-request.propose", new Batch(p.Value.Timestamp, [.. requests, .. forged])),
            1 when requests.Count >= 2 => Count("forge-request.reorder", new Batch(p.Value.Timestamp, requests.Reverse().ToArray())),
            2 when requests.Any(r => r.From == _withheld) && requests.Any(r => r.From != _withheld) =>
                Count("forge-request.withhold", new Batch(p.Value.Timestamp, requests.Where(r => r.From != _withheld).ToArray())),
            _ => null,
        };
    }

    private Batch Count(string action, Batch b)
    {
        Ctx.Count(action);
        return b;
    }

    private List<ClientRequest> Forgeries(int max)
    {
        var genuine = GenuineRequests();
        var forged = new List<ClientRequest>();
        if (genuine.Count == 0)
        {
            return forged;
        }
        var clients = genuine.Select(r => r.From).Distinct().ToList();
        for (var i = 0; i < max; i++)
        {
            var g = Ctx.Rng.Pick(genuine);
            forged.Add(Ctx.Rng.Next(4) switch
            {
                0 => new ClientRequest(g.From, g.Sequence + Ctx.Rng.Range(1, 4), Ctx.Rng.Bytes((int)Ctx.Rng.Range(1, 64)))
                {
                    Proof = Ctx.Rng.Chance(0.5) ? Ctx.Rng.Bytes(g.Proof.Length) : [],
                },
                1 => new ClientRequest(g.From, g.Sequence + 1, g.Payload) { Proof = g.Proof },
                2 => new ClientRequest(g.From, g.Sequence, Flip(g.Payload)) { Proof = g.Proof },
                _ => new ClientRequest(Ctx.Rng.Pick(clients) is var c && c != g.From ? c : g.From + 1, g.Sequence, g.Payload) { Proof = g.Proof },
            });
        }
        return forged;
    }

    private byte[] Flip(byte[] payload)
    {
        if (payload.Length == 0)
        {
            return [1];
        }
        var copy = payload.ToArray();
        copy[Ctx.Rng.Next(copy.Length)] ^= (byte)(1 + Ctx.Rng.Next(255));
        return copy;
    }

    private List<ClientRequest> GenuineRequests()
    {
        var list = new List<ClientRequest>();
        foreach (var m in Ctx.Inbound)
        {
            switch (m)
            {
                case ClientRequest r:
                    list.Add(r);
                    break;
                case Propose p:
                    list.AddRange(p.Value.Requests);
                    break;
            }
        }
        return list;
    }
}
