using System.Buffers.Binary;
using System.Security.Cryptography;

namespace SieveQ.Bft.Hosting.Transport;

/// <summary>AEAD key and IV of one direction of one link, as the handshake's HKDF derives them.</summary>
public sealed record DirectionKeys(byte[] Key, byte[] Iv)
{
    public const int KeyBytes = 32;
    public const int IvBytes = 12;
}

/// <summary>
/// AES-256-GCM for one direction of one link. The nonce of frame <c>s</c> is the direction's IV XOR
/// <c>0^4 || u64be(s)</c>, as TLS 1.3 builds its record nonces: the sequence never repeats within a connection
/// (it is a 64-bit counter that would take centuries to wrap) and every connection and direction has its own
/// key, so no (key, nonce) pair is ever used twice. Not thread-safe: one sender (the holder of the send turn)
/// or one receive loop uses an instance.
/// </summary>
public sealed class FrameCipher : IDisposable
{
    public const int TagBytes = 16;
    /// <summary>
    /// Plaintext one key may seal before the link is closed and redialled for fresh keys: 2^36 bytes is 2^32
    /// AES blocks, which keeps GCM's distinguishing advantage near 2^-64 (the margin TLS 1.3's record limits
    /// aim at). The handshake is the rekeying, so no key-update message is needed on the wire.
    /// </summary>
    public const long MaxSealedBytesPerKey = 1L << 36;
    private readonly AesGcm _aead;
    private readonly byte[] _iv = new byte[DirectionKeys.IvBytes];
    private readonly long _maxSealedBytes;
    private long _sealedBytes;

    public FrameCipher(DirectionKeys keys)
        : this(keys, MaxSealedBytesPerKey)
    {
    }

    /// <summary>With a smaller budget than <see cref="MaxSealedBytesPerKey"/>, so tests can reach it.</summary>
    internal FrameCipher(DirectionKeys keys, long maxSealedBytes)
    {
        _maxSealedBytes = maxSealedBytes;
        if (keys.Key.Length != DirectionKeys.KeyBytes || keys.Iv.Length != DirectionKeys.IvBytes)
        {
            throw new ArgumentException($"link keys must be {DirectionKeys.KeyBytes} + {DirectionKeys.IvBytes} bytes", nameof(keys));
        }
        _aead = new AesGcm(keys.Key, TagBytes);
        keys.Iv.CopyTo(_iv, 0);
    }

    /// <summary>True once this key has sealed its budget; the link must end and be redialled.</summary>
    public bool Exhausted => _sealedBytes >= _maxSealedBytes;

    /// <summary>Encrypts <paramref name="body"/> in place and writes its tag; the header is associated data.</summary>
    public void Seal(ulong sequence, ReadOnlySpan<byte> header, Span<byte> body, Span<byte> tag)
    {
        if (Exhausted)
        {
            throw new CryptographicException("link key has sealed its byte budget; the link must be re-established");
        }
        Span<byte> nonce = stackalloc byte[DirectionKeys.IvBytes];
        Nonce(sequence, nonce);
        _aead.Encrypt(nonce, body, body, tag, header);
        _sealedBytes += body.Length;
    }

    /// <summary>Decrypts <paramref name="ciphertext"/> into <paramref name="plaintext"/> (same length, may be the same span); false when the tag does not match.</summary>
    public bool TryOpen(ulong sequence, ReadOnlySpan<byte> header, ReadOnlySpan<byte> ciphertext, ReadOnlySpan<byte> tag, Span<byte> plaintext)
    {
        Span<byte> nonce = stackalloc byte[DirectionKeys.IvBytes];
        Nonce(sequence, nonce);
        try
        {
            _aead.Decrypt(nonce, ciphertext, tag, plaintext, header);
            return true;
        }
        catch (AuthenticationTagMismatchException)
        {
            // A bad frame ends the link, so this exception is paid at most once per connection.
            return false;
        }
    }

    private void Nonce(ulong sequence, Span<byte> nonce)
    {
        _iv.CopyTo(nonce);
        var counter = nonce[4..];
        BinaryPrimitives.WriteUInt64BigEndian(counter, BinaryPrimitives.ReadUInt64BigEndian(counter) ^ sequence);
    }

    public void Dispose() => _aead.Dispose();
}
