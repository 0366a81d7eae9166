using System.Buffers.Binary;
using System.Security.Cryptography;

namespace SieveQ.Bft.Protocol;

/// <summary>
/// A checkpoint's bytes as a list of chunks: its length, the chunk size, and the SHA-256 of each chunk. Replicas agree
/// on <see cref="Root"/> (f+1 matching state replies), so a requester holding a manifest whose root matches can check
/// each chunk on arrival, from whichever replica it came.
/// </summary>
public sealed record StateManifest(long Length, int ChunkBytes, IReadOnlyList<Digest> ChunkHashes)
{
    private static ReadOnlySpan<byte> Tag => "SQBFT/MANIFEST/v1"u8;

    /// <summary>How many chunks a state of <paramref name="length"/> bytes takes at <paramref name="chunkBytes"/> each.</summary>
    public static long ChunksFor(long length, int chunkBytes) => (length + chunkBytes - 1) / chunkBytes;

    /// <summary>Consistent when the chunk count is the one the length and the chunk size imply; a decoder checks this.</summary>
    public bool IsConsistent => Length >= 0 && ChunkBytes > 0 && ChunkHashes.Count == ChunksFor(Length, ChunkBytes);

    public int ChunkCount => ChunkHashes.Count;

    public long OffsetOf(int index) => (long)index * ChunkBytes;

    /// <summary>The length of chunk <paramref name="index"/>: the chunk size, less for the last one.</summary>
    public int LengthOf(int index) => (int)Math.Min(ChunkBytes, Length - OffsetOf(index));

    /// <summary>SHA-256 over a domain tag, the length, the chunk size and every chunk's hash: what replicas vouch for.</summary>
    public Digest Root
    {
        get
        {
            using var h = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
            Span<byte> head = stackalloc byte[8 + 4 + 4];
            BinaryPrimitives.WriteInt64LittleEndian(head, Length);
            BinaryPrimitives.WriteInt32LittleEndian(head[8..], ChunkBytes);
            BinaryPrimitives.WriteInt32LittleEndian(head[12..], ChunkHashes.Count);
            h.AppendData(Tag);
            h.AppendData(head);
            Span<byte> d = stackalloc byte[Digest.Size];
            foreach (var c in ChunkHashes)
            {
                c.CopyTo(d);
                h.AppendData(d);
            }
            Span<byte> root = stackalloc byte[Digest.Size];
            h.GetHashAndReset(root);
            return new Digest(root);
        }
    }

    public static StateManifest Of(ReadOnlySpan<byte> state, int chunkBytes)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(chunkBytes);
        var count = (int)ChunksFor(state.Length, chunkBytes);
        var hashes = new Digest[count];
        for (var i = 0; i < count; i++)
        {
            var offset = i * chunkBytes;
            hashes[i] = Digest.Compute(state.Slice(offset, Math.Min(chunkBytes, state.Length - offset)));
        }
        return new StateManifest(state.Length, chunkBytes, hashes);
    }
}
