using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Replica;

namespace SieveQ.Sieve.Tests;

/// <summary>The verdict cache is keyed by an item's exact bytes: one changed byte must miss.</summary>
public sealed class ItemKeyTests
{
    private static byte[] Item(int length, byte fill) => [.. Enumerable.Range(0, length).Select(i => (byte)(fill + i))];

    [Fact]
    public void Equal_bytes_in_different_buffers_are_one_key()
    {
        var a = ItemKey.Over(Item(600, 1));
        var b = ItemKey.Over(Item(600, 1));
        Assert.Equal(a, b);
        Assert.Equal(a.GetHashCode(), b.GetHashCode());
    }

    [Fact]
    public void One_changed_byte_or_a_cut_is_another_key()
    {
        var genuine = Item(600, 1);
        var forged = Item(600, 1);
        forged[599] ^= 1;
        Assert.NotEqual(ItemKey.Over(genuine), ItemKey.Over(forged));
        Assert.NotEqual(ItemKey.Over(genuine), ItemKey.Over(genuine.AsMemory(0, 599)));
    }

    [Fact]
    public void A_stored_key_owns_its_bytes()
    {
        var buffer = Item(100, 7);
        var owned = ItemKey.Over(buffer).Owned();
        buffer[0] ^= 0xFF;  // the request buffer is reused or freed after verification
        Assert.Equal(ItemKey.Over(Item(100, 7)), owned);
        Assert.NotEqual(ItemKey.Over(buffer), owned);
    }

    [Fact]
    public void A_forged_item_never_takes_the_verdict_of_the_genuine_one()
    {
        var cache = new SignatureVerdictCache();
        var genuine = Item(600, 3);
        cache.Put(ItemKey.Over(genuine), SignatureVerdict.Valid);
        var forged = (byte[])genuine.Clone();
        forged[10] ^= 0x80;
        Assert.False(cache.TryTake(ItemKey.Over(forged), out _));
        Assert.True(cache.TryTake(ItemKey.Over((byte[])genuine.Clone()), out var verdict));
        Assert.Equal(SignatureVerdict.Valid, verdict);
        Assert.False(cache.TryTake(ItemKey.Over(genuine), out _));  // taken once: each item executes once
    }

    [Fact]
    public void The_cache_holds_no_more_item_bytes_than_its_budget()
    {
        const long budget = 1 << 20;
        var cache = new SignatureVerdictCache(capacity: 1 << 18, byteBudget: budget);
        for (var i = 0; i < 5_000; i++)
        {
            var item = Item(1_000, (byte)i);
            BitConverter.TryWriteBytes(item, i);
            cache.Put(ItemKey.Over(item), SignatureVerdict.Valid);
            // A generation turns over at the put that reaches half the budget: at most one item over, each.
            Assert.True(cache.Bytes <= budget + (2 * 1_000), $"{cache.Bytes} bytes held after {i + 1} puts");
        }
        Assert.InRange(cache.Count, 1, (int)(budget / 1_000));
    }
}
