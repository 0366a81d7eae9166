using System.Buffers.Binary;
using System.Security.Cryptography;
using System.Text;

namespace SieveQ.Controller.Access;

/// <summary>
/// What a management call's signature covers (controller.proto): a domain tag, the full method name, the body bytes
/// as sent, the timestamp and the nonce. The method is inside so a signed Status cannot be replayed as a
/// QuarantineSender with the same body bytes.
/// </summary>
public static class ManagementSignature
{
    public const int NonceBytes = 16;
    private static readonly byte[] Domain = "SIEVEQ/MANAGEMENT/v1"u8.ToArray();

    public static byte[] SignedBytes(string method, ReadOnlySpan<byte> body, long timestampMs, ReadOnlySpan<byte> nonce)
    {
        ArgumentNullException.ThrowIfNull(method);
        var m = Encoding.UTF8.GetBytes(method);
        var bytes = new byte[Domain.Length + 4 + m.Length + 4 + body.Length + 8 + nonce.Length];
        var span = bytes.AsSpan();
        Domain.CopyTo(span);
        span = span[Domain.Length..];
        BinaryPrimitives.WriteUInt32BigEndian(span, (uint)m.Length);
        m.CopyTo(span[4..]);
        span = span[(4 + m.Length)..];
        BinaryPrimitives.WriteUInt32BigEndian(span, (uint)body.Length);
        body.CopyTo(span[4..]);
        span = span[(4 + body.Length)..];
        BinaryPrimitives.WriteInt64BigEndian(span, timestampMs);
        nonce.CopyTo(span[8..]);
        return bytes;
    }

    /// <summary>Lower-case hex of the first 8 bytes of SHA-256 over the key's SubjectPublicKeyInfo.</summary>
    public static string KeyIdOf(byte[] publicKeySpki)
    {
        ArgumentNullException.ThrowIfNull(publicKeySpki);
        return Convert.ToHexStringLower(SHA256.HashData(publicKeySpki).AsSpan(0, 8));
    }
}
