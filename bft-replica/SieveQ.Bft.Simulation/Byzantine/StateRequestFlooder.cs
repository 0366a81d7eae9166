using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>
/// The SieveQ paper's attack on state transfer: ask every peer for its full state, over and over,
/// ask for chunks of checkpoints (held or not) far beyond what one transfer needs, and push unsolicited
/// state replies with made-up manifests and unsolicited chunks. Serving (replies and chunks) must be
/// rate-limited per peer and unsolicited state ignored.
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
                var manifest = StateManifest.Of(Ctx.Rng.Bytes(3 * Ctx.Config.StateChunkBytes / 2), Ctx.Config.StateChunkBytes);
                sink.Add(new Outgoing(to, new StateReply(Ctx.Self, cp, Ctx.RandomDigest(), manifest.Root, manifest, []), null));
                sink.Add(new Outgoing(to, new StateChunk(Ctx.Self, cp, 0, Held: true, Ctx.Rng.Bytes(Ctx.Config.StateChunkBytes)), null));
                Ctx.Count("flood-state.unsolicited-replies");
            }
            var checkpoint = Ctx.Core?.LastCheckpointId ?? 0;
            for (var i = 0; i < 8; i++)
            {
                sink.Add(new Outgoing(to, new StateChunkRequest(Ctx.Self, Ctx.Rng.Chance(0.5) ? checkpoint : Ctx.Rng.Range(0, Ctx.LastDecided + 1), Ctx.Rng.Next(64)), null));
            }
            Ctx.Count("flood-state.chunk-requests", 8);
        }
    }
}
