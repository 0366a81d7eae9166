using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Keys;

/// <summary>
/// The MAC keys of one pair of parties (sender and pre-SQ, or replica and receiver) for the current
/// and the previous epoch. Signing always uses the current epoch; verification accepts either, so
/// frames MACed just before a rotation still pass while both sides switch over. Anything older is
/// refused. Safe to read from several threads; rotation swaps an immutable pair.
/// </summary>
public sealed class MacKeyRing
{
    public const int KeyBytes = 32;
    public const int TagBytes = 32;

    private sealed record Keys(uint CurrentEpoch, byte[] Current, uint? PreviousEpoch, byte[]? Previous);

    private Keys _keys;

    public MacKeyRing(uint epoch, ReadOnlySpan<byte> key)
    {
        _keys = new Keys(epoch, CheckKey(key), null, null);
    }

    public uint CurrentEpoch => _keys.CurrentEpoch;

    public uint? PreviousEpoch => _keys.PreviousEpoch;

    /// <summary>Installs the key of a newer epoch; the current key becomes the previous one.</summary>
    public void Rotate(uint newEpoch, ReadOnlySpan<byte> newKey)
    {
        var k = _keys;
        if (newEpoch <= k.CurrentEpoch)
        {
            throw new ArgumentOutOfRangeException(nameof(newEpoch), $"epoch {newEpoch} is not newer than {k.CurrentEpoch}");
        }
        _keys = new Keys(newEpoch, CheckKey(newKey), k.CurrentEpoch, k.Current);
    }

    /// <summary>MAC of <c>tag || data</c> under the current key; returns the epoch used.</summary>
    public uint Sign(ReadOnlySpan<byte> tag, ReadOnlySpan<byte> data, Span<byte> mac)
    {
        var k = _keys;
        TaggedHash.Hmac(k.Current, tag, data, mac);
        return k.CurrentEpoch;
    }

    public bool Verify(uint epoch, ReadOnlySpan<byte> tag, ReadOnlySpan<byte> data, ReadOnlySpan<byte> mac)
    {
        if (mac.Length != TagBytes)
        {
            return false;
        }
        var k = _keys;
        byte[]? key = epoch == k.CurrentEpoch ? k.Current : epoch == k.PreviousEpoch ? k.Previous : null;
        if (key is null)
        {
            return false;
        }
        Span<byte> expected = stackalloc byte[TagBytes];
        TaggedHash.Hmac(key, tag, data, expected);
        return CryptographicOperations.FixedTimeEquals(expected, mac);
    }

    private static byte[] CheckKey(ReadOnlySpan<byte> key) =>
        key.Length == KeyBytes ? key.ToArray() : throw new ArgumentException($"a MAC key is {KeyBytes} bytes", nameof(key));
}
