using SieveQ.Bft.Simulation.Faults;
using SieveQ.Bft.Simulation.Kernel;

namespace SieveQ.Bft.Simulation.Network;

/// <summary>
/// Decides what happens to each message on the wire: lost, cut by a partition, delivered once
/// or twice, after a delay whose jitter reorders messages. Before the plan's heal time all
/// faults apply; after it every message arrives once within a few milliseconds.
/// </summary>
internal sealed class SimNetwork(FaultPlan plan, SimRandom rng, SimStats stats)
{
    private readonly int _replicas = plan.Replicas;

    /// <summary>Node index of a replica or client id, as the partition matrices use it.</summary>
    public int NodeOf(int id) => id < _replicas ? id : _replicas + (id - 1000);

    /// <summary>Arrival times for a message sent now; empty when it is lost.</summary>
    public int Route(int from, int to, long now, Span<long> arrivals)
    {
        if (from == to)
        {
            arrivals[0] = now;
            return 1;
        }
        if (now >= plan.HealAt)
        {
            arrivals[0] = now + 1 + rng.Next(4);
            return 1;
        }
        var a = NodeOf(from);
        var b = NodeOf(to);
        foreach (var p in plan.Partitions)
        {
            if (p.Cuts(a, b, now))
            {
                stats.Count("net.partitioned");
                return 0;
            }
        }
        if (rng.Chance(plan.Loss))
        {
            stats.Count("net.lost");
            return 0;
        }
        arrivals[0] = now + plan.BaseDelayMs + rng.Range(0, plan.JitterMs);
        if (rng.Chance(plan.Duplicate))
        {
            stats.Count("net.duplicated");
            arrivals[1] = now + plan.BaseDelayMs + rng.Range(0, plan.JitterMs * 2);
            return 2;
        }
        return 1;
    }
}
