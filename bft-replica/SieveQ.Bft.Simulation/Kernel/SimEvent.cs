using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Kernel;

/// <summary>Something that happens at one simulated millisecond.</summary>
internal abstract class SimEvent;

/// <summary>
/// A message arriving over the link <paramref name="From"/> -> <paramref name="To"/>: either an
/// object, or raw bytes when a Byzantine sender mangled the frame and the receiver must decode it.
/// </summary>
internal sealed class Delivery(int from, int to, BftMessage? message, byte[]? frame) : SimEvent
{
    public int From { get; } = from;
    public int To { get; } = to;
    public BftMessage? Message { get; } = message;
    public byte[]? Frame { get; } = frame;
}

/// <summary>A replica's timer; stale when the replica re-armed or restarted since it was scheduled.</summary>
internal sealed class ReplicaWake(int replica, long armedFor, int incarnation) : SimEvent
{
    public int Replica { get; } = replica;
    public long ArmedFor { get; } = armedFor;
    public int Incarnation { get; } = incarnation;
}

internal sealed class ClientWake(int client, long armedFor) : SimEvent
{
    public int Client { get; } = client;
    public long ArmedFor { get; } = armedFor;
}

/// <summary>The next request of a client's traffic plan is due.</summary>
internal sealed class ClientSubmit(int client) : SimEvent
{
    public int Client { get; } = client;
}

internal sealed class ReplicaCrash(int replica, int? tornAfterOutputs, bool atRegencyChange, bool planned = false) : SimEvent
{
    public int Replica { get; } = replica;
    public int? TornAfterOutputs { get; } = tornAfterOutputs;
    public bool AtRegencyChange { get; } = atRegencyChange;
    public bool Planned { get; } = planned;
}

internal sealed class ReplicaRestart(int replica) : SimEvent
{
    public int Replica { get; } = replica;
}

/// <summary>A whole-cluster power loss; <see cref="Armed"/> when it only arms the strike at the next decision.</summary>
internal sealed class PowerLossStrike(Faults.PowerLoss loss) : SimEvent
{
    public Faults.PowerLoss Loss { get; } = loss;
    public bool Armed { get; init; }
}

/// <summary>Faults stop: from here on the network is reliable and every crashed replica is back.</summary>
internal sealed class Heal : SimEvent;

/// <summary>Periodic action of a Byzantine replica (floods, replays), independent of its core's timers.</summary>
internal sealed class ByzantineTick(int replica) : SimEvent
{
    public int Replica { get; } = replica;
}

/// <summary>The run has lasted long enough after the last client finished.</summary>
internal sealed class EndOfRun : SimEvent;
