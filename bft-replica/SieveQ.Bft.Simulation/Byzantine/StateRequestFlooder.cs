using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>
/// The SieveQ paper's attack on state transfer: ask every peer for its full state, over and over,
/// and push unsolicited state replies with made-up snapshots. Serving must be rate-limited per
/// peer and unsolicited state ignored.
/// </summary>
internal sealed class StateRequestFlooder(ByzantineContext ctx) : ByzantineBehaviour(ctx)
{
    public override void OnTick(List<Outgoing> sink)
    {
        foreach (var to in Ctx.OtherReplicas())
        {
            sink.Add(new Outgoing(to, new StateRequest(Ctx.Self, 0, WantBody: true), null));
            sink.Add(new Outgoing(to, new StateRequest(Ctx.Self, Ctx.Rng.Range(0, Ctx.LastDecided + 1), WantBody: true), null));
            Ctx.Count("flood-state.requests", 2);
            if (Ctx.Rng.Chance(0.2))
            {
                var cp = Ctx.LastDecided + Ctx.Config.CheckpointInterval;
                var snapshot = Ctx.Rng.Bytes(64);
                sink.Add(new Outgoing(to, new StateReply(Ctx.Self, cp, Ctx.RandomDigest(), snapshot, []), null));
                Ctx.Count("flood-state.unsolicited-replies");
            }
        }
    }
}
