using System.Buffers;
using System.Buffers.Binary;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Codec;

/// <summary>Little-endian writer over an <see cref="IBufferWriter{T}"/>; the canonical layout is whatever this writes.</summary>
internal readonly ref struct WireWriter
{
    private readonly IBufferWriter<byte> _out;

    public WireWriter(IBufferWriter<byte> output) => _out = output;

    public void U8(byte v)
    {
        _out.GetSpan(1)[0] = v;
        _out.Advance(1);
    }

    public void Bool(bool v) => U8(v ? (byte)1 : (byte)0);

    public void I32(int v)
    {
        BinaryPrimitives.WriteInt32LittleEndian(_out.GetSpan(4), v);
        _out.Advance(4);
    }

    public void I64(long v)
    {
        BinaryPrimitives.WriteInt64LittleEndian(_out.GetSpan(8), v);
        _out.Advance(8);
    }

    public void Digest(Digest d)
    {
        d.CopyTo(_out.GetSpan(Protocol.Digest.Size));
        _out.Advance(Protocol.Digest.Size);
    }

    public void Raw(ReadOnlySpan<byte> b) => _out.Write(b);

    public void Bytes(ReadOnlySpan<byte> b)
    {
        I32(b.Length);
        _out.Write(b);
    }
}
