using System.Buffers;
using System.Security.Cryptography;
using SieveQ.Bft.Protocol;

namespace SieveQ.Sieve.Envelope;

/// <summary>
/// SHA-256 and HMAC-SHA256 over <c>tag || data</c>. The concatenation goes through a pooled buffer
/// so the one-shot primitives (no per-call hasher object) can be used on the hot path.
/// </summary>
public static class TaggedHash
{
    /// <summary>Digest of an application body; what replicas vouch for and the post-SQ votes on.</summary>
    public static Digest DataDigest(ReadOnlySpan<byte> data) => Sha256(DomainTags.DataDigest, data);

    public static Digest Sha256(ReadOnlySpan<byte> tag, ReadOnlySpan<byte> data)
    {
        Span<byte> h = stackalloc byte[EnvelopeLimits.HashBytes];
        Sha256(tag, data, h);
        return new Digest(h);
    }

    public static void Sha256(ReadOnlySpan<byte> tag, ReadOnlySpan<byte> data, Span<byte> destination)
    {
        var len = tag.Length + data.Length;
        var rented = ArrayPool<byte>.Shared.Rent(len);
        try
        {
            tag.CopyTo(rented);
            data.CopyTo(rented.AsSpan(tag.Length));
            SHA256.HashData(rented.AsSpan(0, len), destination);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    public static void Hmac(ReadOnlySpan<byte> key, ReadOnlySpan<byte> tag, ReadOnlySpan<byte> data, Span<byte> destination)
    {
        var len = tag.Length + data.Length;
        var rented = ArrayPool<byte>.Shared.Rent(len);
        try
        {
            tag.CopyTo(rented);
            data.CopyTo(rented.AsSpan(tag.Length));
            HMACSHA256.HashData(key, rented.AsSpan(0, len), destination);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <summary>Builds <c>tag || data</c> for a signature primitive that needs one contiguous input.</summary>
    public static byte[] Concat(ReadOnlySpan<byte> tag, ReadOnlySpan<byte> data)
    {
        var b = new byte[tag.Length + data.Length];
        tag.CopyTo(b);
        data.CopyTo(b.AsSpan(tag.Length));
        return b;
    }
}
