using SieveQ.Rules.Matching;

namespace SieveQ.Rules.Tests;

/// <summary>The automaton against a naive search on seeded random inputs, at every dense/sparse split.</summary>
public sealed class AhoCorasickTests
{
    private static ulong Naive(IReadOnlyList<LiteralPattern> patterns, byte[] text, bool fold)
    {
        ulong hits = 0;
        foreach (var p in patterns)
        {
            for (var i = 0; i + p.Bytes.Length <= text.Length; i++)
            {
                var match = true;
                for (var k = 0; k < p.Bytes.Length && match; k++)
                {
                    match = Fold(text[i + k], fold) == Fold(p.Bytes[k], fold);
                }
                if (match)
                {
                    hits |= 1UL << p.Set;
                    break;
                }
            }
        }
        return hits;
    }

    private static byte Fold(byte b, bool fold) => fold && b is >= (byte)'A' and <= (byte)'Z' ? (byte)(b + 32) : b;

    /// <summary>A small alphabet makes overlaps, shared prefixes and suffix matches common.</summary>
    private static byte[] RandomBytes(Random rng, int length, string alphabet)
    {
        var b = new byte[length];
        for (var i = 0; i < length; i++)
        {
            b[i] = (byte)alphabet[rng.Next(alphabet.Length)];
        }
        return b;
    }

    [Theory]
    [InlineData(1, false, 1)]
    [InlineData(2, false, int.MaxValue)]
    [InlineData(3, true, 1)]
    [InlineData(4, true, 7)]
    [InlineData(5, false, 30)]
    [InlineData(6, true, int.MaxValue)]
    public void Matches_a_naive_search_on_random_inputs(int seed, bool fold, int denseStates)
    {
        var rng = new Random(seed);
        for (var round = 0; round < 40; round++)
        {
            var alphabet = round % 2 == 0 ? "abAB" : "abcdefgABCDEFG\u0000\u00ff";
            var patterns = new List<LiteralPattern>();
            var count = rng.Next(1, 60);
            for (var i = 0; i < count; i++)
            {
                patterns.Add(new LiteralPattern(RandomBytes(rng, rng.Next(1, 7), alphabet), rng.Next(0, 64)));
            }
            var ac = AhoCorasickAutomaton.Build(patterns, fold, denseStates);
            var kmp = new KmpMatcher(patterns, fold);
            for (var t = 0; t < 50; t++)
            {
                var text = RandomBytes(rng, rng.Next(0, 200), alphabet);
                var expected = Naive(patterns, text, fold);
                Assert.Equal(expected, ac.Scan(text));
                Assert.Equal(expected, kmp.Scan(text));
                foreach (var set in new[] { expected, ~expected, expected & (expected - 1) })
                {
                    var m = ac.FirstMatch(text, set);
                    var k = kmp.FirstMatch(text, set);
                    Assert.Equal(k?.End, m?.End);
                    if (m is { } found)
                    {
                        // the reported literal really ends there
                        var p = patterns[found.Pattern].Bytes;
                        var slice = text.AsSpan(found.End - p.Length, p.Length).ToArray();
                        Assert.Equal(p.Select(b => Fold(b, fold)), slice.Select(b => Fold(b, fold)));
                        // ... and is (equal, after folding, to) a literal of a wanted set
                        Assert.Contains(patterns, q => (set & (1UL << q.Set)) != 0 && q.Bytes.Select(b => Fold(b, fold)).SequenceEqual(p.Select(b => Fold(b, fold))));
                    }
                }
            }
        }
    }

    [Fact]
    public void Identical_literals_in_different_sets_report_both_sets()
    {
        var ac = AhoCorasickAutomaton.Build([new LiteralPattern("abc"u8.ToArray(), 3), new LiteralPattern("abc"u8.ToArray(), 9)], false);
        Assert.Equal((1UL << 3) | (1UL << 9), ac.Scan("xxabcxx"u8));
        Assert.Equal(5, ac.FirstMatch("xxabcxx"u8, 1UL << 9)!.Value.End);
    }

    [Fact]
    public void Suffix_matches_are_found_through_failure_links()
    {
        var ac = AhoCorasickAutomaton.Build([new LiteralPattern("abcd"u8.ToArray(), 0), new LiteralPattern("bc"u8.ToArray(), 1), new LiteralPattern("c"u8.ToArray(), 2)], false, 1);
        Assert.Equal(0b110UL, ac.Scan("abce"u8));
        Assert.Equal(0b111UL, ac.Scan("zabcd"u8));
    }

    [Fact]
    public void Case_insensitivity_is_ascii_only()
    {
        var ac = AhoCorasickAutomaton.Build([new LiteralPattern("Straße"u8.ToArray(), 0)], true);
        Assert.Equal(1UL, ac.Scan("STRAße"u8));
        Assert.Equal(0UL, ac.Scan("STRASSE"u8));
        Assert.Equal(0UL, ac.Scan("STRAẞE"u8));
    }

    [Fact]
    public void Ten_thousand_patterns_compile_with_a_bounded_dense_part()
    {
        var literals = Samples.SampleRuleSets.Literals(10_000, 1);
        var ac = AhoCorasickAutomaton.Build([.. literals.Select(l => new LiteralPattern(System.Text.Encoding.ASCII.GetBytes(l), 0))], false);
        Assert.True(ac.StateCount > 50_000);
        Assert.True(ac.DenseStateCount < ac.StateCount);
        Assert.Equal(AhoCorasickAutomaton.DenseBudgetBytes, ac.DenseStateCount * ac.RowWidth * sizeof(int));
        Assert.Equal(128, ac.RowWidth); // 88 distinct bytes and the shared class of all others
        Assert.Equal(1UL, ac.Scan(System.Text.Encoding.ASCII.GetBytes("....." + literals[7777] + ".....")));
        Assert.Equal(0UL, ac.Scan(new byte[1000]));
    }

    /// <summary>Over 16 distinct first bytes and literals of four or more: the production scan screens by prefix.</summary>
    [Theory]
    [InlineData(11, false)]
    [InlineData(12, true)]
    [InlineData(13, false)]
    [InlineData(14, true)]
    public void The_prefix_filtered_scan_matches_a_naive_search(int seed, bool fold)
    {
        const string alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGH01\u0000\u00ff";
        var rng = new Random(seed);
        for (var round = 0; round < 30; round++)
        {
            var patterns = new List<LiteralPattern>();
            var count = rng.Next(60, 300);
            for (var i = 0; i < count; i++)
            {
                patterns.Add(new LiteralPattern(RandomBytes(rng, rng.Next(4, 9), alphabet), rng.Next(0, 64)));
            }
            var filtered = AhoCorasickAutomaton.Build(patterns, fold);
            var plain = AhoCorasickAutomaton.Build(patterns, fold, prefilter: false);
            Assert.True(filtered.Prefiltered);
            Assert.False(plain.Prefiltered);
            for (var t = 0; t < 60; t++)
            {
                var text = RandomBytes(rng, rng.Next(0, 300), alphabet);
                // Plant a few literals, case-flipped when folding, so that hits and overlaps are common.
                for (var k = rng.Next(0, 4); k > 0 && text.Length > 0; k--)
                {
                    var lit = patterns[rng.Next(patterns.Count)].Bytes;
                    var at = rng.Next(text.Length);
                    for (var j = 0; j < lit.Length && at + j < text.Length; j++)
                    {
                        var b = lit[j];
                        text[at + j] = fold && rng.Next(2) == 0 && b is >= (byte)'a' and <= (byte)'z' ? (byte)(b - 32)
                            : fold && rng.Next(2) == 0 && b is >= (byte)'A' and <= (byte)'Z' ? (byte)(b + 32) : b;
                    }
                }
                var expected = Naive(patterns, text, fold);
                Assert.Equal(expected, filtered.Scan(text));
                Assert.Equal(expected, plain.Scan(text));
            }
        }
    }

    [Fact]
    public void A_short_literal_or_few_first_bytes_keep_the_automaton_scan()
    {
        var many = Enumerable.Range(0, 26).Select(i => new LiteralPattern([(byte)('a' + i), (byte)'x', (byte)'y', (byte)'z'], 0)).ToList();
        Assert.True(AhoCorasickAutomaton.Build(many, false).Prefiltered);
        Assert.False(AhoCorasickAutomaton.Build([.. many, new LiteralPattern("abc"u8.ToArray(), 1)], false).Prefiltered);
        Assert.False(AhoCorasickAutomaton.Build(many.Take(10).ToList(), false).Prefiltered); // the first-byte search serves those
    }

    /// <summary>
    /// Every position passes the filter and starts a long walk: the walks' budget runs out, the scan
    /// finishes with the automaton (counted), and the answer is still exact.
    /// </summary>
    [Fact]
    public void Traffic_that_passes_the_filter_everywhere_falls_back_to_the_automaton()
    {
        var patterns = new List<LiteralPattern>();
        for (var i = 0; i < 20; i++)
        {
            patterns.Add(new LiteralPattern([.. new byte[40].Select(_ => (byte)'a'), (byte)('A' + i)], i));
            patterns.Add(new LiteralPattern([(byte)('b' + i), (byte)'q', (byte)'r', (byte)'s'], 20 + i));
        }
        var ac = AhoCorasickAutomaton.Build(patterns, false);
        Assert.True(ac.Prefiltered);
        var flood = new byte[1000];
        flood.AsSpan().Fill((byte)'a');
        Assert.Equal(0UL, ac.Scan(flood));
        Assert.Equal(1, ac.PrefilterFallbacks);
        flood[^1] = (byte)'C';
        Assert.Equal(1UL << 2, ac.Scan(flood));
        Assert.Equal(2, ac.PrefilterFallbacks);
        Assert.Equal(1UL << 21, ac.Scan("xxcqrsxx"u8));
        Assert.Equal(2, ac.PrefilterFallbacks);
    }

    [Fact]
    public void An_automaton_of_no_literals_finds_nothing()
    {
        var ac = AhoCorasickAutomaton.Build([], false);
        Assert.False(ac.Prefiltered);
        Assert.Equal(0UL, ac.Scan("anything at all"u8));
    }
}
