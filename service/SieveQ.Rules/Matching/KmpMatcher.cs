namespace SieveQ.Rules.Matching;

/// <summary>
/// The SieveQ paper's method (section 6.4): one Knuth-Morris-Pratt scan of the payload per literal,
/// O(n + k) each, so O(patterns x n) per message. Kept as the benchmark baseline and as a second,
/// independent engine the tests compare Aho-Corasick with.
/// </summary>
public sealed class KmpMatcher : ILiteralMatcher
{
    private readonly byte[][] _patterns;
    private readonly int[][] _prefix;
    private readonly int[] _sets;
    private readonly byte[] _fold;

    public KmpMatcher(IReadOnlyList<LiteralPattern> patterns, bool asciiCaseInsensitive)
    {
        ArgumentNullException.ThrowIfNull(patterns);
        _fold = asciiCaseInsensitive ? AsciiFold.Lower : AsciiFold.Identity;
        _patterns = new byte[patterns.Count][];
        _prefix = new int[patterns.Count][];
        _sets = new int[patterns.Count];
        for (var i = 0; i < patterns.Count; i++)
        {
            _patterns[i] = AsciiFold.Apply(patterns[i].Bytes, _fold);
            _prefix[i] = PrefixFunction(_patterns[i]);
            _sets[i] = patterns[i].Set;
        }
    }

    public ulong Scan(ReadOnlySpan<byte> text)
    {
        ulong hits = 0;
        for (var p = 0; p < _patterns.Length; p++)
        {
            var bit = 1UL << _sets[p];
            if ((hits & bit) == 0 && IndexOfEnd(text, p) >= 0)
            {
                hits |= bit;
            }
        }
        return hits;
    }

    public LiteralMatch? FirstMatch(ReadOnlySpan<byte> text, ulong sets)
    {
        LiteralMatch? best = null;
        for (var p = 0; p < _patterns.Length; p++)
        {
            if ((sets & (1UL << _sets[p])) == 0)
            {
                continue;
            }
            var end = IndexOfEnd(text, p);
            if (end >= 0 && (best is null || end < best.Value.End || (end == best.Value.End && _patterns[p].Length > _patterns[best.Value.Pattern].Length)))
            {
                best = new LiteralMatch(p, end);
            }
        }
        return best;
    }

    /// <summary>End offset (exclusive) of the first occurrence of pattern <paramref name="p"/>, or -1.</summary>
    private int IndexOfEnd(ReadOnlySpan<byte> text, int p)
    {
        var pattern = _patterns[p];
        var prefix = _prefix[p];
        var q = 0;
        for (var i = 0; i < text.Length; i++)
        {
            var c = _fold[text[i]];
            while (q > 0 && pattern[q] != c)
            {
                q = prefix[q - 1];
            }
            if (pattern[q] == c)
            {
                q++;
            }
            if (q == pattern.Length)
            {
                return i + 1;
            }
        }
        return -1;
    }

    private static int[] PrefixFunction(byte[] pattern)
    {
        var pi = new int[pattern.Length];
        var k = 0;
        for (var i = 1; i < pattern.Length; i++)
        {
            while (k > 0 && pattern[k] != pattern[i])
            {
                k = pi[k - 1];
            }
            if (pattern[k] == pattern[i])
            {
                k++;
            }
            pi[i] = k;
        }
        return pi;
    }
}
