namespace SieveQ.Rules.Matching;

/// <summary>One literal pattern and the pattern set (bit index, below 64) it belongs to.</summary>
public readonly record struct LiteralPattern(byte[] Bytes, int Set);

/// <summary>Where a pattern of a wanted set first ends in a payload.</summary>
public readonly record struct LiteralMatch(int Pattern, int End);

/// <summary>Finds which pattern sets have at least one literal in a payload.</summary>
public interface ILiteralMatcher
{
    /// <summary>Bit i set when some literal of set i occurs in <paramref name="text"/>.</summary>
    ulong Scan(ReadOnlySpan<byte> text);

    /// <summary>The first (by end position) literal of a set in <paramref name="sets"/>; null when none.</summary>
    LiteralMatch? FirstMatch(ReadOnlySpan<byte> text, ulong sets);
}

/// <summary>Which literal engine a rule set compiles to.</summary>
public enum LiteralEngine
{
    /// <summary>One pass over the payload for all literals, positions screened by prefix: the production engine.</summary>
    AhoCorasick,

    /// <summary>The same automaton stepping through every byte, without the prefix screen (for comparison).</summary>
    AhoCorasickUnfiltered,

    /// <summary>One KMP pass per literal, as in the SieveQ paper (6.4): the benchmark's baseline.</summary>
    Kmp,
}

/// <summary>ASCII-only case folding: the same on every machine, whatever the culture.</summary>
internal static class AsciiFold
{
    public static readonly byte[] Identity = Build(false);

    public static readonly byte[] Lower = Build(true);

    private static byte[] Build(bool fold)
    {
        var t = new byte[256];
        for (var i = 0; i < 256; i++)
        {
            t[i] = (byte)(fold && i is >= 'A' and <= 'Z' ? i + 32 : i);
        }
        return t;
    }

    public static byte[] Apply(byte[] bytes, byte[] table)
    {
        var r = new byte[bytes.Length];
        for (var i = 0; i < bytes.Length; i++)
        {
            r[i] = table[bytes[i]];
        }
        return r;
    }
}
