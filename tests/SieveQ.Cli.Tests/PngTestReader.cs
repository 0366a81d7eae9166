using System.Buffers.Binary;
using System.IO.Compression;
using System.Text;

namespace SieveQ.Cli.Tests;

/// <summary>
/// Independent minimal PNG reader for tests: 8-bit RGBA (colour type 6) or RGB (type 2), filter 0
/// scanlines only. Verifies the signature and every chunk CRC.
/// </summary>
internal sealed class PngTestReader
{
    private static readonly byte[] Signature = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A];

    private PngTestReader(int width, int height, int channels, byte[] raw, IReadOnlyList<string> chunkTypes)
    {
        Width = width;
        Height = height;
        Channels = channels;
        Raw = raw;
        ChunkTypes = chunkTypes;
    }

    public int Width { get; }

    public int Height { get; }

    public int Channels { get; }

    /// <summary>The inflated IDAT stream: <see cref="Height"/> scanlines of 1 + Width * Channels bytes.</summary>
    public byte[] Raw { get; }

    public IReadOnlyList<string> ChunkTypes { get; }

    public int Stride => 1 + (Width * Channels);

    public static PngTestReader Read(byte[] png)
    {
        Assert.True(png.Length > Signature.Length, "too short for a PNG");
        Assert.Equal(Signature, png[..Signature.Length]);

        var types = new List<string>();
        using var idat = new MemoryStream();
        int width = 0, height = 0, channels = 0;
        var offset = Signature.Length;
        while (offset < png.Length)
        {
            var length = BinaryPrimitives.ReadInt32BigEndian(png.AsSpan(offset));
            var type = Encoding.ASCII.GetString(png, offset + 4, 4);
            var data = png.AsSpan(offset + 8, length);
            var storedCrc = BinaryPrimitives.ReadUInt32BigEndian(png.AsSpan(offset + 8 + length));
            Assert.Equal(BitwiseCrc32(png.AsSpan(offset + 4, 4 + length)), storedCrc);
            types.Add(type);

            switch (type)
            {
                case "IHDR":
                    Assert.Equal(13, length);
                    width = BinaryPrimitives.ReadInt32BigEndian(data);
                    height = BinaryPrimitives.ReadInt32BigEndian(data[4..]);
                    Assert.Equal(8, data[8]);
                    channels = data[9] switch
                    {
                        6 => 4,
                        2 => 3,
                        _ => throw new InvalidDataException($"unsupported colour type {data[9]}"),
                    };
                    Assert.Equal([0, 0, 0], data[10..13].ToArray());
                    break;
                case "IDAT":
                    idat.Write(data);
                    break;
                default:
                    break;
            }

            offset += 12 + length;
        }

        Assert.Equal(png.Length, offset);
        Assert.Equal("IHDR", types[0]);
        Assert.Equal("IEND", types[^1]);

        idat.Position = 0;
        using var zlib = new ZLibStream(idat, CompressionMode.Decompress);
        using var raw = new MemoryStream();
        zlib.CopyTo(raw);
        return new PngTestReader(width, height, channels, raw.ToArray(), types);
    }

    /// <summary>Pixel as 0xRRGGBB (alpha ignored).</summary>
    public uint Rgb(int x, int y)
    {
        var i = (y * Stride) + 1 + (x * Channels);
        return ((uint)Raw[i] << 16) | ((uint)Raw[i + 1] << 8) | Raw[i + 2];
    }

    public byte Alpha(int x, int y) => Channels == 4 ? Raw[(y * Stride) + 1 + (x * Channels) + 3] : (byte)255;

    public int Count(uint rgb)
    {
        var n = 0;
        for (var y = 0; y < Height; y++)
        {
            for (var x = 0; x < Width; x++)
            {
                if (Rgb(x, y) == rgb)
                {
                    n++;
                }
            }
        }

        return n;
    }

    /// <summary>Bit-at-a-time CRC-32 (reflected, polynomial 0xEDB88320), deliberately not table-driven.</summary>
    public static uint BitwiseCrc32(ReadOnlySpan<byte> data)
    {
        var crc = 0xFFFFFFFFu;
        foreach (var b in data)
        {
            crc ^= b;
            for (var k = 0; k < 8; k++)
            {
                crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
            }
        }

        return ~crc;
    }
}
