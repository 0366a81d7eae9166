using System.Security.Cryptography;
using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Filtering;

namespace SieveQ.Sieve.Tests;

public sealed class BoundedVerdictCacheTests
{
    private static Digest Key(int i) => new(SHA256.HashData(BitConverter.GetBytes(i)));

    [Fact]
    public void Stays_within_its_capacity_and_keeps_the_newest_generation()
    {
        var cache = new BoundedVerdictCache<Digest, int>(capacity: 1_000);
        for (var i = 0; i < 10_000; i++)
        {
            cache.Put(Key(i), i);
        }
        Assert.InRange(cache.Count, 500, 1_000);
        Assert.True(cache.TryGet(Key(9_999), out var newest) && newest == 9_999);
        Assert.False(cache.TryGet(Key(0), out _));
    }

    [Fact]
    public void Stays_within_its_capacity_under_parallel_puts()
    {
        var cache = new BoundedVerdictCache<Digest, int>(capacity: 1_000);
        Parallel.For(0, 50_000, new ParallelOptions { MaxDegreeOfParallelism = 4 }, i => cache.Put(Key(i), i));
        // A rotation can race with puts in flight; they may land in either generation, never unbounded.
        Assert.InRange(cache.Count, 1, 1_000 + 4);
    }
}
