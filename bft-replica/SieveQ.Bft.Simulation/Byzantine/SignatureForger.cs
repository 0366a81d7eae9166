using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>
/// Sends signatures it cannot have made: random bytes, or another replica's signature passed off
/// as its own or nested in certificates and SYNC evidence. The hosts' pre-check must drop all of it.
/// </summary>
internal sealed class SignatureForger(ByzantineContext ctx) : ByzantineBehaviour(ctx)
{
    public override void OnOutput(Outgoing o, List<Outgoing> sink)
    {
        if (!Ctx.Rng.Chance(0.5))
        {
            sink.Add(o);
            return;
        }
        switch (o.Message)
        {
            case Write w:
                Ctx.Count("forge.write");
                sink.Add(o with { Message = w with { Signature = StolenOrRandom() } });
                return;
            case StopData sd:
                {
                    Ctx.Count("forge.stopdata");
                    var cid = sd.LastDecided + 1;
                    var hash = Ctx.RandomDigest();
                    var forgedWrites = Enumerable.Range(0, Ctx.Config.N).Take(Ctx.Config.Quorum)
                        .Select(r => new WriteSignature(r, r == Ctx.Self ? Ctx.SignWrite(Math.Max(0, sd.NewRegency - 1), cid, hash) : StolenOrRandom()))
                        .ToArray();
                    var cert = new PreparedCertificate(cid, Math.Max(0, sd.NewRegency - 1), hash, new Batch(Ctx.LocalNow, []), forgedWrites);
                    sink.Add(o with { Message = Ctx.Resign(sd with { Certificates = [cert] }) });
                    return;
                }
            case Sync s when s.Evidence.Count > 0:
                {
                    Ctx.Count("forge.sync-evidence");
                    var victim = Ctx.Rng.Next(s.Evidence.Count);
                    sink.Add(o with { Message = s with { Evidence = s.Evidence.Select((e, i) => i == victim ? e with { Signature = StolenOrRandom() } : e).ToArray() } });
                    return;
                }
        }
        sink.Add(o);
    }

    public override void OnTick(List<Outgoing> sink)
    {
        if (!Ctx.Rng.Chance(0.3))
        {
            return;
        }
        Ctx.Count("forge.unprompted-write");
        var w = new Write(Ctx.Self, Ctx.Regency, Ctx.LastDecided + 1, Ctx.RandomDigest(), StolenOrRandom());
        foreach (var r in Ctx.OtherReplicas())
        {
            sink.Add(new Outgoing(r, w, null));
        }
    }

    private byte[] StolenOrRandom()
    {
        var seen = Ctx.Inbound.OfType<Write>().Where(w => w.From != Ctx.Self).ToList();
        return seen.Count > 0 && Ctx.Rng.Chance(0.5) ? Ctx.Rng.Pick(seen).Signature : Ctx.Rng.Bytes(32);
    }
}
