using SieveQ.Sieve.Replica;

namespace SieveQ.ReplicaSq;

/// <summary>
/// The agreed output a replica-SQ is about to stream with bodies, as it will go out. The product streams it as
/// agreed (no stage); the fault tests substitute what a compromised replica-SQ would send (other bytes behind
/// the agreed digests) from their own project, so the shipped binary has no switch that makes it lie.
/// </summary>
public interface IOutputBodyStage
{
    OutboxBatch Stream(OutboxBatch agreed);
}
