using System.Numerics;

namespace SieveQ.Bft.Simulation.Kernel;

/// <summary>
/// xoshiro256** seeded through SplitMix64. The simulator's only source of randomness: the same
/// seed gives the same run on every machine and runtime, which System.Random does not promise.
/// </summary>
public sealed class SimRandom
{
    private ulong _s0, _s1, _s2, _s3;

    public SimRandom(ulong seed)
    {
        var x = seed;
        _s0 = SplitMix(ref x);
        _s1 = SplitMix(ref x);
        _s2 = SplitMix(ref x);
        _s3 = SplitMix(ref x);
    }

    private static ulong SplitMix(ref ulong x)
    {
        x += 0x9E3779B97F4A7C15UL;
        var z = x;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
        return z ^ (z >> 31);
    }

    public ulong NextU64()
    {
        var result = BitOperations.RotateLeft(_s1 * 5, 7) * 9;
        var t = _s1 << 17;
        _s2 ^= _s0;
        _s3 ^= _s1;
        _s1 ^= _s2;
        _s0 ^= _s3;
        _s2 ^= t;
        _s3 = BitOperations.RotateLeft(_s3, 45);
        return result;
    }

    /// <summary>Uniform in [0, maxExclusive); the modulo bias is below 2^-30 for the ranges used here.</summary>
    public int Next(int maxExclusive) => maxExclusive <= 1 ? 0 : (int)((NextU64() >> 1) % (ulong)maxExclusive);

    /// <summary>Uniform in [min, maxInclusive].</summary>
    public long Range(long min, long maxInclusive) =>
        maxInclusive <= min ? min : min + (long)((NextU64() >> 1) % (ulong)(maxInclusive - min + 1));

    public double NextDouble() => (NextU64() >> 11) * (1.0 / (1UL << 53));

    public bool Chance(double p) => p > 0 && NextDouble() < p;

    public T Pick<T>(IReadOnlyList<T> items) => items[Next(items.Count)];

    public void Fill(Span<byte> buffer)
    {
        for (var i = 0; i < buffer.Length; i++)
        {
            buffer[i] = (byte)NextU64();
        }
    }

    public byte[] Bytes(int length)
    {
        var b = new byte[length];
        Fill(b);
        return b;
    }

    /// <summary>An independent stream, so that drawing more numbers in one part of the run does not shift another.</summary>
    public SimRandom Fork() => new(NextU64());

    public void Shuffle<T>(IList<T> items)
    {
        for (var i = items.Count - 1; i > 0; i--)
        {
            var j = Next(i + 1);
            (items[i], items[j]) = (items[j], items[i]);
        }
    }
}
