using System.Buffers.Binary;
using SieveQ.PreSq;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Attacks.Attacks;

/// <summary>
/// What a compromised pre-SQ does to the messages its checks passed, while <see cref="Active"/> (the attack's window):
/// the real pre-SQ host runs it in place of the product's pass-through, in a process of its own
/// (<see cref="CompromisedPreSqProcess"/>). Counts every message it acted on.
/// </summary>
internal abstract class CompromisingStage : IPassedMessageStage, ISwitchedStage
{
    private long _applied;
    private volatile bool _active;

    public long Applied => Interlocked.Read(ref _applied);

    public bool Active
    {
        get => _active;
        set => _active = value;
    }

    public ReadOnlyMemory<byte>? Forward(StructureKind kind, ReadOnlyMemory<byte> message)
    {
        if (!_active || kind != StructureKind.SenderMessage)
        {
            return message;
        }
        Interlocked.Increment(ref _applied);
        return Compromise(message);
    }

    protected abstract ReadOnlyMemory<byte>? Compromise(ReadOnlyMemory<byte> message);

    public static CompromisingStage? Named(string name) => name switch
    {
        "tampering" => new TamperingStage(),
        "dropping" => new DroppingStage(),
        _ => null,
    };
}

/// <summary>Flips one signed byte of each sender message: the first DATA byte, or the receiver id when DATA is empty.</summary>
internal sealed class TamperingStage : CompromisingStage
{
    protected override ReadOnlyMemory<byte>? Compromise(ReadOnlyMemory<byte> message)
    {
        var copy = message.ToArray();
        const int dataOffset = SenderMessageCodec.HeaderBytes;
        if (copy.Length < dataOffset)
        {
            return copy;
        }
        var dataLength = BinaryPrimitives.ReadInt32LittleEndian(copy.AsSpan(dataOffset - 4, 4));
        copy[dataLength > 0 ? dataOffset : dataOffset - 8] ^= 0x5A;
        return copy;
    }
}

/// <summary>Takes each sender message its checks passed and forwards nothing.</summary>
internal sealed class DroppingStage : CompromisingStage
{
    protected override ReadOnlyMemory<byte>? Compromise(ReadOnlyMemory<byte> message) => null;
}
