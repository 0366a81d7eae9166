using SieveQ.Sieve.Envelope;

namespace SieveQ.PreSq;

/// <summary>
/// A message that passed the pre-SQ's checks, on its way to the ordering batch. The product forwards it as it
/// is (no stage); the fault tests substitute what a compromised pre-SQ would do (alter it, withhold it) from
/// their own project, so the shipped binary has no switch that makes it misbehave.
/// </summary>
public interface IPassedMessageStage
{
    /// <summary>The bytes to order, or null to forward nothing (the sender's stream is then not bound to this pre-SQ either).</summary>
    ReadOnlyMemory<byte>? Forward(StructureKind kind, ReadOnlyMemory<byte> message);
}
