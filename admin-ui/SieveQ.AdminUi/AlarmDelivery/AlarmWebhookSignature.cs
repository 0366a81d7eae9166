using System.Globalization;
using System.Security.Cryptography;
using System.Text;

namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>
/// How a webhook request is signed: HMAC-SHA256, keyed with the webhook's secret (its UTF-8 bytes), over
/// <c>TIMESTAMP "." BODY</c>, where TIMESTAMP is the decimal Unix seconds sent in <see cref="TimestampHeader"/>. The
/// timestamp is inside the MAC so a receiver that refuses old timestamps (and remembers event ids for that window)
/// refuses a replayed request; the body is the exact bytes sent, never re-serialised.
/// </summary>
public static class AlarmWebhookSignature
{
    public const string SignatureHeader = "X-SieveQ-Signature";
    public const string TimestampHeader = "X-SieveQ-Timestamp";
    public const string EventIdHeader = "X-SieveQ-Event-Id";
    public const string Prefix = "sha256=";

    /// <summary>The <see cref="SignatureHeader"/> value: <c>sha256=</c> and the lower-case hex MAC.</summary>
    public static string Sign(string secret, long timestampUnixSeconds, ReadOnlySpan<byte> body)
    {
        ArgumentNullException.ThrowIfNull(secret);
        return Prefix + Convert.ToHexStringLower(Mac(secret, timestampUnixSeconds, body));
    }

    /// <summary>A receiver's check (also the tests'): the MAC matches, compared in constant time.</summary>
    public static bool Verify(string secret, string? timestampHeader, string? signatureHeader, ReadOnlySpan<byte> body)
    {
        ArgumentNullException.ThrowIfNull(secret);
        if (!long.TryParse(timestampHeader, NumberStyles.None, CultureInfo.InvariantCulture, out var timestamp)
            || signatureHeader is null || !signatureHeader.StartsWith(Prefix, StringComparison.Ordinal))
        {
            return false;
        }
        byte[] given;
        try
        {
            given = Convert.FromHexString(signatureHeader.AsSpan(Prefix.Length));
        }
        catch (FormatException)
        {
            return false;
        }
        return CryptographicOperations.FixedTimeEquals(given, Mac(secret, timestamp, body));
    }

    private static byte[] Mac(string secret, long timestamp, ReadOnlySpan<byte> body)
    {
        var prefix = Encoding.ASCII.GetBytes(timestamp.ToString(CultureInfo.InvariantCulture) + ".");
        var signed = new byte[prefix.Length + body.Length];
        prefix.CopyTo(signed, 0);
        body.CopyTo(signed.AsSpan(prefix.Length));
        return HMACSHA256.HashData(Encoding.UTF8.GetBytes(secret), signed);
    }
}
