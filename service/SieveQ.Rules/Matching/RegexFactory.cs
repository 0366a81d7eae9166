using System.Collections.Concurrent;
using System.Text.RegularExpressions;

namespace SieveQ.Rules.Matching;

/// <summary>
/// The only way rule sets get regular expressions: the non-backtracking engine (linear in the input,
/// so no timeout is needed and no input can make it blow up), culture-invariant. Building such an
/// engine costs far more than parsing a rule set, and the same expressions come back with every
/// version, restore and check, so built expressions (immutable, thread-safe) are shared, up to a bound.
/// </summary>
internal static class RegexFactory
{
    private const int MaxCached = 1024;

    private static readonly ConcurrentDictionary<(string Pattern, bool IgnoreCase), Regex> Cache = new();

    public static Regex Create(string pattern, bool ignoreCase, string path)
    {
        if (Cache.TryGetValue((pattern, ignoreCase), out var cached))
        {
            return cached;
        }
        var options = RegexOptions.NonBacktracking | RegexOptions.CultureInvariant | (ignoreCase ? RegexOptions.IgnoreCase : 0);
        Regex regex;
        try
        {
            regex = new Regex(pattern, options, Regex.InfiniteMatchTimeout);
        }
        catch (ArgumentException e)
        {
            throw new RuleSetException(RuleSetErrorKind.Schema, path, $"invalid regular expression: {e.Message}", e);
        }
        catch (NotSupportedException e)
        {
            // Backreferences, lookarounds and automata beyond the engine's size limit have no linear-time form here.
            throw new RuleSetException(RuleSetErrorKind.Schema, path, $"not supported by the linear-time engine: {e.Message}", e);
        }
        if (Cache.Count < MaxCached)
        {
            Cache.TryAdd((pattern, ignoreCase), regex);
        }
        return regex;
    }
}
