using System.Buffers.Binary;
using System.Numerics;

namespace SieveQ.Sieve.Sender.Outbox;

/// <summary>CRC-32C (Castagnoli) with the hardware instruction where there is one (<see cref="BitOperations.Crc32C(uint, ulong)"/>).</summary>
internal static class Crc32C
{
    public static uint Append(uint crc, ReadOnlySpan<byte> data)
    {
        while (data.Length >= 8)
        {
            crc = BitOperations.Crc32C(crc, BinaryPrimitives.ReadUInt64LittleEndian(data));
            data = data[8..];
        }
        foreach (var b in data)
        {
            crc = BitOperations.Crc32C(crc, b);
        }
        return crc;
    }

    public static uint Compute(ReadOnlySpan<byte> header, ReadOnlySpan<byte> body) => ~Append(Append(~0u, header), body);
}
