namespace SieveQ.Sieve.Filtering;

/// <summary>
/// A signed item's exact bytes (or a signed Merkle root claim's) as a cache key: equal only when every
/// byte is equal, so a forged item can never find the verdict of a genuine one. It replaced a SHA-256 of
/// the bytes, which an item paid three times per replica (verified from the pre-SQ's request, again inside
/// the leader's PROPOSE, and looked up at execution): a sixth of replica CPU went to SHA-256 and OpenSSL's
/// per-call overhead at full load.
/// The hash code only spreads keys over buckets; it is seeded per process by <see cref="HashCode"/>, so
/// nobody can line up many items in one bucket.
/// </summary>
public readonly struct ItemKey : IEquatable<ItemKey>
{
    private readonly ReadOnlyMemory<byte> _bytes;
    private readonly int _hash;

    private ItemKey(ReadOnlyMemory<byte> bytes, int hash)
    {
        _bytes = bytes;
        _hash = hash;
    }

    public int Length => _bytes.Length;

    /// <summary>A key over the caller's bytes, for lookups; the bytes must not change while it is used.</summary>
    public static ItemKey Over(ReadOnlyMemory<byte> bytes)
    {
        var h = new HashCode();
        h.AddBytes(bytes.Span);
        return new ItemKey(bytes, h.ToHashCode());
    }

    /// <summary>The same key over its own copy of the bytes, for storing: a cached key must not keep a whole request buffer alive.</summary>
    public ItemKey Owned() => new(_bytes.ToArray(), _hash);

    public bool Equals(ItemKey other) => _hash == other._hash && _bytes.Span.SequenceEqual(other._bytes.Span);

    public override bool Equals(object? obj) => obj is ItemKey k && Equals(k);

    public override int GetHashCode() => _hash;

    public static bool operator ==(ItemKey left, ItemKey right) => left.Equals(right);

    public static bool operator !=(ItemKey left, ItemKey right) => !left.Equals(right);
}
