using System.Buffers.Binary;
using System.Security.Cryptography;

namespace SieveQ.Bft.Protocol;

/// <summary>A SHA-256 value held inline so dictionaries keyed by it allocate nothing.</summary>
public readonly struct Digest : IEquatable<Digest>
{
    public const int Size = 32;
    private readonly ulong _a, _b, _c, _d;

    public Digest(ReadOnlySpan<byte> bytes)
    {
        if (bytes.Length != Size)
        {
            throw new ArgumentException($"a digest is {Size} bytes, got {bytes.Length}", nameof(bytes));
        }
        _a = BinaryPrimitives.ReadUInt64LittleEndian(bytes);
        _b = BinaryPrimitives.ReadUInt64LittleEndian(bytes[8..]);
        _c = BinaryPrimitives.ReadUInt64LittleEndian(bytes[16..]);
        _d = BinaryPrimitives.ReadUInt64LittleEndian(bytes[24..]);
    }

    public static Digest Zero => default;

    public static Digest Compute(ReadOnlySpan<byte> data)
    {
        Span<byte> h = stackalloc byte[Size];
        SHA256.HashData(data, h);
        return new Digest(h);
    }

    public void CopyTo(Span<byte> destination)
    {
        BinaryPrimitives.WriteUInt64LittleEndian(destination, _a);
        BinaryPrimitives.WriteUInt64LittleEndian(destination[8..], _b);
        BinaryPrimitives.WriteUInt64LittleEndian(destination[16..], _c);
        BinaryPrimitives.WriteUInt64LittleEndian(destination[24..], _d);
    }

    public byte[] ToArray()
    {
        var b = new byte[Size];
        CopyTo(b);
        return b;
    }

    public bool Equals(Digest other) => _a == other._a && _b == other._b && _c == other._c && _d == other._d;
    public override bool Equals(object? obj) => obj is Digest d && Equals(d);
    public override int GetHashCode() => (int)_a ^ (int)(_a >> 32);
    public static bool operator ==(Digest l, Digest r) => l.Equals(r);
    public static bool operator !=(Digest l, Digest r) => !l.Equals(r);
    public override string ToString() => Convert.ToHexStringLower(ToArray())[..12];
}
