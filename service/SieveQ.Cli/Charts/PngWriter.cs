using System.Buffers.Binary;
using System.IO.Compression;
using System.Text;

namespace SieveQ.Cli.Charts;

/// <summary>
/// Minimal PNG encoder: 8-bit truecolour with alpha (colour type 6), no interlacing, filter 0 on
/// every scanline, a single zlib-compressed IDAT chunk.
/// </summary>
internal static class PngWriter
{
    private static readonly byte[] Signature = [0x89, (byte)'P', (byte)'N', (byte)'G', 0x0D, 0x0A, 0x1A, 0x0A];
    private static readonly uint[] CrcTable = BuildCrcTable();

    /// <summary>Writes a PNG image.</summary>
    /// <param name="output">Destination stream.</param>
    /// <param name="width">Image width in pixels.</param>
    /// <param name="height">Image height in pixels.</param>
    /// <param name="rgba">Row-major pixels, each packed as 0xRRGGBBAA.</param>
    public static void Write(Stream output, int width, int height, ReadOnlySpan<uint> rgba)
    {
        ArgumentNullException.ThrowIfNull(output);
        ArgumentOutOfRangeException.ThrowIfLessThan(width, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(height, 1);
        var rowBytes = checked((width * 4) + 1);
        if (rgba.Length != checked(width * height))
        {
            throw new ArgumentException($"Expected {width * height} pixels, got {rgba.Length}.", nameof(rgba));
        }

        output.Write(Signature);

        Span<byte> header = stackalloc byte[13];
        BinaryPrimitives.WriteInt32BigEndian(header, width);
        BinaryPrimitives.WriteInt32BigEndian(header[4..], height);
        header[8] = 8;   // bit depth
        header[9] = 6;   // colour type: truecolour with alpha
        header[10] = 0;  // compression: deflate
        header[11] = 0;  // filter method 0
        header[12] = 0;  // no interlace
        WriteChunk(output, "IHDR", header);

        using (var compressed = new MemoryStream())
        {
            using (var zlib = new ZLibStream(compressed, CompressionLevel.Optimal, leaveOpen: true))
            {
                var row = new byte[rowBytes];
                for (var y = 0; y < height; y++)
                {
                    row[0] = 0; // filter type None
                    var source = rgba.Slice(y * width, width);
                    for (var x = 0; x < width; x++)
                    {
                        BinaryPrimitives.WriteUInt32BigEndian(row.AsSpan(1 + (x * 4), 4), source[x]);
                    }

                    zlib.Write(row);
                }
            }

            WriteChunk(output, "IDAT", compressed.GetBuffer().AsSpan(0, checked((int)compressed.Length)));
        }

        WriteChunk(output, "IEND", []);
    }

    /// <summary>CRC-32 (ISO 3309 / ITU-T V.42, as used by PNG) over <paramref name="data"/>.</summary>
    public static uint Crc32(ReadOnlySpan<byte> data, uint crc = 0)
    {
        crc = ~crc;
        foreach (var b in data)
        {
            crc = CrcTable[(crc ^ b) & 0xFF] ^ (crc >> 8);
        }

        return ~crc;
    }

    private static void WriteChunk(Stream output, string type, ReadOnlySpan<byte> data)
    {
        Span<byte> buffer = stackalloc byte[8];
        BinaryPrimitives.WriteInt32BigEndian(buffer, data.Length);
        Encoding.ASCII.GetBytes(type, buffer[4..]);
        output.Write(buffer);
        output.Write(data);

        var crc = Crc32(data, Crc32(buffer[4..]));
        BinaryPrimitives.WriteUInt32BigEndian(buffer, crc);
        output.Write(buffer[..4]);
    }

    private static uint[] BuildCrcTable()
    {
        var table = new uint[256];
        for (uint n = 0; n < 256; n++)
        {
            var c = n;
            for (var k = 0; k < 8; k++)
            {
                c = (c & 1) != 0 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            }

            table[n] = c;
        }

        return table;
    }
}
