using SieveQ.Bft.Core;
using SieveQ.Bft.Simulation.Kernel;

namespace SieveQ.Bft.Simulation.Faults;

/// <summary>
/// The protocol configuration for simulated runs: the production time-outs scaled down about
/// sevenfold so a run covers several regency changes in a few simulated seconds, and small
/// checkpoint intervals and batches so checkpoints, truncation and state transfer happen often.
/// </summary>
public static class SimulationConfig
{
    public static ReplicaConfig For(int replicas, SimRandom rng)
    {
        ArgumentNullException.ThrowIfNull(rng);
        return new ReplicaConfig
        {
            N = replicas,
            RequestTimeoutMs = 300,
            HeartbeatIntervalMs = 50,
            LeaderSilenceTimeoutMs = 300,
            SyncTimeoutMs = 400,
            MaxDecisionIntervalMs = 250,
            CheckpointInterval = rng.Pick([4, 8, 16]),
            MaxBatchRequests = rng.Pick([2, 8, 32]),
            MaxBatchBytes = 64 * 1024,
            ClientWindow = 64,
            MaxPendingTotal = 512,
            MaxClients = 64,
            TimestampSkewMs = 200,
            MaxFutureInstances = 8,
            MaxOutOfContextPerPeer = 32,
            StateServeIntervalMs = 200,
            StateTransferTimeoutMs = 300,
            // Small chunks, so that a checkpoint (a few KiB to tens of KiB here) travels in several of them.
            StateChunkBytes = 1024,
            StateChunkTimeoutMs = 100,
        };
    }
}
