using SieveQ.Bft.Simulation.Kernel;

namespace SieveQ.Bft.Simulation.Faults;

/// <summary>
/// Draws a run's plan from its seed. At most f replicas are faulty (crashed or Byzantine). On top
/// of that, some crash plans take every correct replica down at once, at a random moment or at a
/// regency change: progress stops while they are down, but durability must lose nothing.
/// </summary>
public static class FaultPlanner
{
    /// <summary>Liveness must be reached this long after the later of healing and the end of traffic.</summary>
    public const long LivenessWindowMs = 30_000;

    /// <param name="seed">The run's seed: it decides whether the run has a power loss (<see cref="FaultProfile.PowerLossFor"/>).</param>
    public static FaultPlan Create(SimRandom rng, FaultProfile profile, int replicas, ulong seed = 1)
    {
        ArgumentNullException.ThrowIfNull(rng);
        ArgumentNullException.ThrowIfNull(profile);
        var config = SimulationConfig.For(replicas, rng);
        config.Validate();
        var f = config.F;
        var clients = (int)rng.Range(3, 4);
        var requests = Enumerable.Range(0, clients).Select(_ => (int)rng.Range(20, 40)).ToArray();
        var trafficEnd = rng.Range(800, 2500);
        var heal = profile.Any ? rng.Range(1000, 3000) : 0;

        var partitions = new List<PartitionWindow>();
        double loss = 0, dup = 0;
        long baseDelay = rng.Range(1, 5), jitter = rng.Range(0, 5);
        if (profile.Network)
        {
            loss = rng.Chance(0.3) ? 0.2 + (rng.NextDouble() * 0.1) : rng.NextDouble() * 0.2;
            dup = rng.NextDouble() * 0.1;
            baseDelay = rng.Range(1, 10);
            jitter = rng.Range(0, 40);
            var windows = (int)rng.Range(0, 3);
            for (var i = 0; i < windows; i++)
            {
                partitions.Add(RandomPartition(rng, replicas, clients, heal));
            }
        }

        var crashes = new List<CrashWindow>();
        var byzantine = new List<ByzantineAssignment>();
        var replicaFaults = profile.Crash || profile.Byzantine.Count > 0;
        if (replicaFaults)
        {
            var faulty = rng.Chance(0.7) ? f : (int)rng.Range(1, f);
            var free = Enumerable.Range(0, replicas).ToList();
            rng.Shuffle(free);
            for (var i = 0; i < faulty; i++)
            {
                var byz = profile.Byzantine.Count > 0 && (!profile.Crash || rng.Chance(0.5));
                if (byz)
                {
                    var kinds = PickKinds(rng, profile);
                    var id = ChooseByzantineId(rng, free, kinds);
                    free.Remove(id);
                    if (kinds.Any(k => k is ByzantineKind.BadSync or ByzantineKind.BadStopData))
                    {
                        // These lies are only told during a regency change: cut off the first leader for a while to force one.
                        heal = Math.Max(heal, 1_600);
                        partitions.Add(Isolate(0, replicas, clients, rng.Range(200, 500), "isolate first leader 0 so that a regency change happens"));
                    }
                    byzantine.Add(new ByzantineAssignment(id, kinds, rng.Range(0, trafficEnd / 2), 0.6 + (rng.NextDouble() * 0.35), 1000 + rng.Next(clients)));
                }
                else
                {
                    var id = free[^1];
                    free.RemoveAt(free.Count - 1);
                    var t = rng.Range(50, Math.Max(100, heal - 300));
                    var cycles = rng.Chance(0.4) ? 2 : 1;
                    for (var c = 0; c < cycles && t < heal; c++)
                    {
                        var restart = Math.Min(heal, t + rng.Range(50, 1_500));
                        crashes.Add(new CrashWindow(id, t, restart, rng.Chance(0.5) ? (int)rng.Range(0, 6) : null));
                        t = restart + rng.Range(100, 600);
                    }
                }
            }
        }

        if (profile.Crash && rng.Chance(0.15))
        {
            AddClusterRestart(rng, replicas, heal, crashes, byzantine);
        }

        // Drawn from its own fork so that adding the family left every other seed's plan as it was.
        var powerLosses = profile.PowerLossFor(seed) ? PlanPowerLosses(rng.Fork(), replicas, ref heal) : [];

        var plan = new FaultPlan
        {
            Config = config,
            Clients = clients,
            RequestsPerClient = requests,
            TrafficEnd = trafficEnd,
            MaxPayloadBytes = 200,
            ClientRetransmitMs = 250,
            ClientMaxOutstanding = (int)rng.Range(2, 8),
            HealAt = heal,
            Loss = loss,
            Duplicate = dup,
            BaseDelayMs = baseDelay,
            JitterMs = jitter,
            Partitions = partitions,
            Crashes = crashes,
            Byzantine = byzantine,
            PowerLosses = powerLosses,
            ClockOffsets = Enumerable.Range(0, replicas).Select(_ => rng.Range(0, config.TimestampSkewMs / 4)).ToArray(),
            TickPeriods = Enumerable.Range(0, replicas).Select(_ => rng.Range(10, 50)).ToArray(),
            LivenessDeadline = Math.Max(heal, trafficEnd) + LivenessWindowMs,
        };
        // Half the whole (untorn) crashes are planned stops, a leader stepping down first. Drawn last, from their own
        // fork, so that every seed's plan is otherwise what it was before planned stops existed.
        var planned = rng.Fork();
        for (var i = 0; i < crashes.Count; i++)
        {
            if (crashes[i].TornAfterOutputs is null && !crashes[i].AtRegencyChange && planned.Chance(0.5))
            {
                crashes[i] = crashes[i] with { Planned = true };
            }
        }
        return plan;
    }

    /// <summary>
    /// Every correct replica goes down at about the same time and comes back from its disk: more
    /// than f crashes stop progress for a while, but durability must keep every decision.
    /// </summary>
    private static void AddClusterRestart(SimRandom rng, int replicas, long heal, List<CrashWindow> crashes, List<ByzantineAssignment> byzantine)
    {
        var at = rng.Range(100, Math.Max(200, heal - 400));
        var atRegencyChange = rng.Chance(0.5);
        for (var r = 0; r < replicas; r++)
        {
            var down = at + rng.Range(0, 30);
            var up = atRegencyChange ? heal : Math.Min(heal, down + rng.Range(50, 800));
            if (byzantine.Any(b => b.Replica == r) || crashes.Any(c => c.Replica == r && c.CrashAt <= up + 100 && down <= c.RestartAt + 100))
            {
                continue;
            }
            crashes.Add(new CrashWindow(r, down, up, atRegencyChange || rng.Chance(0.5) ? (int)rng.Range(0, 6) : null, atRegencyChange));
        }
    }

    /// <summary>One or two whole-cluster power losses while traffic flows, each over before the network heals.</summary>
    private static List<PowerLoss> PlanPowerLosses(SimRandom rng, int replicas, ref long heal)
    {
        heal = Math.Max(heal, 1_500);
        var losses = new List<PowerLoss>();
        var count = rng.Chance(0.3) ? 2 : 1;
        var at = rng.Range(100, 600);
        for (var i = 0; i < count; i++)
        {
            var delays = Enumerable.Range(0, replicas).Select(_ => rng.Range(20, 600)).ToArray();
            var torn = new Dictionary<int, int>();
            for (var r = 0; r < replicas; r++)
            {
                if (rng.Chance(0.25))
                {
                    torn[r] = (int)rng.Range(0, 6);
                }
            }
            losses.Add(new PowerLoss(at, rng.Chance(0.7), delays, torn));
            at += delays.Max() + rng.Range(200, 700);
        }
        heal = Math.Max(heal, at);
        return losses;
    }

    private static List<ByzantineKind> PickKinds(SimRandom rng, FaultProfile profile)
    {
        if (profile.Byzantine.Count <= 2)
        {
            return [.. profile.Byzantine];
        }
        var pool = profile.Byzantine.ToList();
        rng.Shuffle(pool);
        return pool.Take((int)rng.Range(1, 3)).OrderBy(k => k).ToList();
    }

    private static int ChooseByzantineId(SimRandom rng, List<int> free, List<ByzantineKind> kinds)
    {
        // Behaviours that need leadership are only exercised if the replica leads; regency r is led by r mod n.
        if (kinds.Contains(ByzantineKind.BadSync) && free.Contains(1) && rng.Chance(0.8))
        {
            return 1;
        }
        // Request forgery works as a follower too, so it leads only half the time.
        if ((kinds.Any(k => k.NeedsLeadership()) || (kinds.Contains(ByzantineKind.ForgeRequests) && rng.Chance(0.5))) && free.Contains(0) && rng.Chance(0.75))
        {
            return 0;
        }
        return free[^1];
    }

    private static PartitionWindow RandomPartition(SimRandom rng, int replicas, int clients, long heal)
    {
        var start = rng.Range(0, Math.Max(1, heal - 200));
        var end = Math.Min(heal, start + rng.Range(100, 1_500));
        var nodes = replicas + clients;
        var blocked = new bool[nodes, nodes];
        switch (rng.Next(4))
        {
            case 0:
                {
                    // Symmetric split of the replicas; each client stays on one side or reaches both.
                    var side = new int[nodes];
                    for (var r = 0; r < replicas; r++)
                    {
                        side[r] = rng.Next(2);
                    }
                    for (var c = replicas; c < nodes; c++)
                    {
                        side[c] = rng.Next(3) - 1;
                    }
                    for (var a = 0; a < nodes; a++)
                    {
                        for (var b = 0; b < nodes; b++)
                        {
                            blocked[a, b] = side[a] >= 0 && side[b] >= 0 && side[a] != side[b];
                        }
                    }
                    return new PartitionWindow(start, end, $"split sides [{string.Join(",", side)}]", blocked);
                }
            case 1:
                {
                    var victim = rng.Next(replicas);
                    return Isolate(victim, replicas, clients, start, $"isolate replica {victim}", end - start);
                }
            case 2:
                {
                    // Asymmetric: the victim hears everyone but nobody hears it.
                    var victim = rng.Next(replicas);
                    for (var b = 0; b < nodes; b++)
                    {
                        blocked[victim, b] = b != victim;
                    }
                    return new PartitionWindow(start, end, $"replica {victim} cannot send", blocked);
                }
            default:
                {
                    // Asymmetric: random one-way replica links.
                    var cut = new List<string>();
                    for (var a = 0; a < replicas; a++)
                    {
                        for (var b = 0; b < replicas; b++)
                        {
                            if (a != b && rng.Chance(0.3))
                            {
                                blocked[a, b] = true;
                                cut.Add($"{a}->{b}");
                            }
                        }
                    }
                    return new PartitionWindow(start, end, $"one-way cuts {string.Join(" ", cut)}", blocked);
                }
        }
    }

    private static PartitionWindow Isolate(int victim, int replicas, int clients, long start, string description, long length = 800)
    {
        var nodes = replicas + clients;
        var blocked = new bool[nodes, nodes];
        for (var b = 0; b < nodes; b++)
        {
            if (b != victim)
            {
                blocked[victim, b] = true;
                blocked[b, victim] = true;
            }
        }
        return new PartitionWindow(start, start + length, description, blocked);
    }
}
