using System.Buffers.Binary;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Replica;
using SieveQ.PreSq;
using SieveQ.ReplicaSq;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// What a compromised pre-SQ or replica-SQ does, as stages plugged into the real hosts, which the test then
/// runs in its own process (<see cref="SieveDeployment.StartAsync"/>): the shipped binaries have no switch
/// for any of it. Each counts what it did, so a test can tell the attack happened.
/// </summary>
internal abstract class CompromisedStage
{
    private long _applied;

    public long Applied => Interlocked.Read(ref _applied);

    protected void Count() => Interlocked.Increment(ref _applied);
}

/// <summary>Flips one signed byte of every sender message it forwards: the first DATA byte, or the receiver id when DATA is empty.</summary>
internal sealed class TamperingPreSq : CompromisedStage, IPassedMessageStage
{
    public ReadOnlyMemory<byte>? Forward(StructureKind kind, ReadOnlyMemory<byte> message)
    {
        if (kind != StructureKind.SenderMessage)
        {
            return message;
        }
        Count();
        var copy = message.ToArray();
        const int dataOffset = SenderMessageCodec.HeaderBytes;
        var dataLength = BinaryPrimitives.ReadInt32LittleEndian(copy.AsSpan(dataOffset - 4, 4));
        copy[dataLength > 0 ? dataOffset : dataOffset - 8] ^= 0x5A;
        return copy;
    }
}

/// <summary>Takes every frame its checks pass and forwards none.</summary>
internal sealed class DroppingPreSq : CompromisedStage, IPassedMessageStage
{
    public ReadOnlyMemory<byte>? Forward(StructureKind kind, ReadOnlyMemory<byte> message)
    {
        Count();
        return null;
    }
}

/// <summary>The lie of a Byzantine designated replica: the agreed digests with other bytes behind them.</summary>
internal sealed class CorruptingReplicaSq : CompromisedStage, IOutputBodyStage
{
    public OutboxBatch Stream(OutboxBatch agreed)
    {
        Count();
        return agreed with
        {
            Items = agreed.Items.Select(i =>
            {
                var data = i.Data.Length == 0 ? [0xFF] : (byte[])i.Data.Clone();
                data[0] ^= 0xFF;
                return i with { Data = data };
            }).ToList(),
        };
    }
}
