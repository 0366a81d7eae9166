using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>
/// Floods every peer with validly signed messages for instances just ahead of the window and
/// far beyond it, checkpoints and heartbeats claiming progress nobody made, and STOPs for
/// distant regencies. Memory must stay bounded and one liar must not trigger a state transfer.
/// </summary>
internal sealed class FutureFlooder(ByzantineContext ctx) : ByzantineBehaviour(ctx)
{
    public override void OnTick(List<Outgoing> sink)
    {
        var rng = Ctx.Rng;
        var window = Ctx.Config.MaxFutureInstances;
        foreach (var to in Ctx.OtherReplicas())
        {
            var cid = Ctx.LastDecided + (rng.Chance(0.5) ? rng.Range(1, 2L * window) : rng.Range(1_000, 1_000_000_000));
            var h = Ctx.RandomDigest();
            var reg = Ctx.Regency;
            sink.Add(new Outgoing(to, new Write(Ctx.Self, reg, cid, h, Ctx.SignWrite(reg, cid, h)), null));
            sink.Add(new Outgoing(to, new Accept(Ctx.Self, reg, cid, h), null));
            sink.Add(new Outgoing(to, new Propose(Ctx.Self, reg, cid, new Batch(Ctx.LocalNow, [])), null));
            sink.Add(new Outgoing(to, new Checkpoint(Ctx.Self, cid + Ctx.Config.CheckpointInterval, h), null));
            sink.Add(new Outgoing(to, new Heartbeat(Ctx.Self, reg, cid), null));
            sink.Add(new Outgoing(to, new Stop(Ctx.Self, reg + (int)rng.Range(1, 5_000), []), null));
        }
        Ctx.Count("flood-future.sent", 6L * (Ctx.Config.N - 1));
    }
}
