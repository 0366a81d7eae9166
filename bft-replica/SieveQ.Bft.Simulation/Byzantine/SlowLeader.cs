namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>
/// While it leads, holds every message back by a planned fraction (60-95%) of the tighter of the
/// request time-out and the slow-leader bound: the Aardvark attack of staying just under the limits.
/// </summary>
internal sealed class SlowLeader(ByzantineContext ctx) : ByzantineBehaviour(ctx)
{
    private readonly long _delay = (long)(ctx.Assignment.SlowFraction * Math.Min(
        ctx.Config.RequestTimeoutMs,
        ctx.Config.MaxDecisionIntervalMs > 0 ? ctx.Config.MaxDecisionIntervalMs : ctx.Config.RequestTimeoutMs));

    public override void OnOutput(Outgoing o, List<Outgoing> sink)
    {
        if (Ctx.IsLeader)
        {
            Ctx.Count("slow-leader.delayed");
            sink.Add(o with { ExtraDelay = o.ExtraDelay + _delay });
            return;
        }
        sink.Add(o);
    }
}
