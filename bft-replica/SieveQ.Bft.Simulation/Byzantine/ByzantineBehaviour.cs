using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>
/// One kind of misbehaviour, as a transformation of a real core's inputs and outputs. Each output
/// is handed over per destination so a behaviour can tell different replicas different things.
/// </summary>
internal abstract class ByzantineBehaviour(ByzantineContext context)
{
    protected ByzantineContext Ctx { get; } = context;

    /// <summary>What the core gets to see of a message that passed the host's checks; null hides it.</summary>
    public virtual BftMessage? OnInput(BftMessage message) => message;

    public virtual void OnOutput(Outgoing o, List<Outgoing> sink) => sink.Add(o);

    /// <summary>Unprompted sends (floods, replays), every few simulated milliseconds.</summary>
    public virtual void OnTick(List<Outgoing> sink)
    {
    }
}
