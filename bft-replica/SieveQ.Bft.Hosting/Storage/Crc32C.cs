using System.Buffers.Binary;
using System.Numerics;

namespace SieveQ.Bft.Hosting.Storage;

/// <summary>CRC-32C (Castagnoli) using the CPU's CRC32 instruction where present; guards WAL records against torn writes.</summary>
public static class Crc32C
{
    public static uint Compute(ReadOnlySpan<byte> data)
    {
        var crc = 0xFFFFFFFFu;
        while (data.Length >= 8)
        {
            crc = BitOperations.Crc32C(crc, BinaryPrimitives.ReadUInt64LittleEndian(data));
            data = data[8..];
        }
        foreach (var b in data)
        {
            crc = BitOperations.Crc32C(crc, b);
        }
        return ~crc;
    }
}
