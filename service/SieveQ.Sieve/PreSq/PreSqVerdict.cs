using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;

namespace SieveQ.Sieve.PreSq;

/// <summary>
/// The pre-SQ's decision on one frame. When <see cref="Passed"/>, <see cref="Body"/> is the sender
/// message or ACKREQ exactly as received (a slice of the frame) to forward for ordering.
/// </summary>
public readonly record struct PreSqVerdict(bool Passed, SieveStage Stage, DropReason Reason, int Sender, long Seq, StructureKind Kind, ReadOnlyMemory<byte> Body)
{
    public static PreSqVerdict Drop(SieveStage stage, DropReason reason, int sender = -1, long seq = 0) =>
        new(false, stage, reason, sender, seq, default, ReadOnlyMemory<byte>.Empty);
}
