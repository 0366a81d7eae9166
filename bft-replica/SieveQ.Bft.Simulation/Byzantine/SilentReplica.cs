namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>From a planned moment on, sends nothing at all (a dead leader that still holds its slot, or a mute follower).</summary>
internal sealed class SilentReplica(ByzantineContext ctx) : ByzantineBehaviour(ctx)
{
    public override void OnOutput(Outgoing o, List<Outgoing> sink)
    {
        if (Ctx.GlobalNow >= Ctx.Assignment.SilentFrom)
        {
            Ctx.Count("silent.withheld");
            return;
        }
        sink.Add(o);
    }
}
