using System.Buffers;
using System.Text;
using System.Text.RegularExpressions;
using SieveQ.Sieve.Replica;
using SieveQ.Rules.Document;

namespace SieveQ.Rules.Matching;

/// <summary>
/// Every pattern set of a rule set, compiled together: all case-sensitive literals in one automaton,
/// all ASCII-case-insensitive ones in another, and each set's regular expressions joined into one
/// linear-time expression. A payload is scanned at most once per automaton whatever the number of
/// rules and sets; a set's regex runs only when a rule asks about that set and no literal of it hit.
/// <para>
/// The literal scan can also run ahead of execution, on the verifier's threads (<see cref="Prescan"/>);
/// the hit set travels with the message's signature verdict to execution. Only the literal part is done
/// ahead: regular expressions stay lazy, so what a denial names is the same with or without a prescan.
/// </para>
/// </summary>
internal sealed class PatternScanner
{
    public const long MaxLiteralBytes = 16L << 20;

    private readonly ILiteralMatcher? _exact;
    private readonly ILiteralMatcher? _folded;
    private readonly string[] _exactText;
    private readonly string[] _foldedText;
    private readonly Regex?[] _regexes;
    private readonly string[] _setNames;
    private long _prescanned;
    private long _found;
    private long _scannedInline;

    public PatternScanner(IReadOnlyList<PatternSetSpec> sets, LiteralEngine engine, int denseStates)
    {
        _setNames = [.. sets.Select(s => s.Name)];
        _regexes = new Regex?[sets.Count];
        var exact = new List<LiteralPattern>();
        var folded = new List<LiteralPattern>();
        var exactText = new List<string>();
        var foldedText = new List<string>();
        long total = 0;
        for (var i = 0; i < sets.Count; i++)
        {
            var s = sets[i];
            foreach (var literal in s.Literals)
            {
                total += literal.Length;
                (s.CaseInsensitive ? folded : exact).Add(new LiteralPattern(literal, i));
                (s.CaseInsensitive ? foldedText : exactText).Add(Printable(literal));
            }
            if (s.Regexes.Count > 0)
            {
                _regexes[i] = JoinedRegex(s);
            }
        }
        if (total > MaxLiteralBytes)
        {
            throw new RuleSetException(RuleSetErrorKind.Limit, "/patternSets", $"literals total {total} bytes, the limit is {MaxLiteralBytes}");
        }
        _exact = Build(exact, false, engine, denseStates);
        _folded = Build(folded, true, engine, denseStates);
        _exactText = [.. exactText];
        _foldedText = [.. foldedText];
        LiteralCount = exact.Count + folded.Count;
        RegexCount = sets.Sum(s => s.Regexes.Count);
    }

    /// <summary>A set's expressions as one alternation; when that fails, the failing expression is named.</summary>
    private static Regex JoinedRegex(PatternSetSpec s)
    {
        var joined = string.Join('|', s.Regexes.Select(r => "(?:" + r + ")"));
        try
        {
            return RegexFactory.Create(joined, s.CaseInsensitive, s.Path + "/regexes");
        }
        catch (RuleSetException)
        {
            for (var r = 0; r < s.Regexes.Count; r++)
            {
                _ = RegexFactory.Create(s.Regexes[r], s.CaseInsensitive, $"{s.Path}/regexes/{r}");
            }
            throw; // each alone is fine, only the alternation is not (too large for the engine)
        }
    }

    public int LiteralCount { get; }

    public int RegexCount { get; }

    public string SetName(int set) => _setNames[set];

    private static ILiteralMatcher? Build(List<LiteralPattern> patterns, bool fold, LiteralEngine engine, int denseStates) => patterns.Count == 0
        ? null
        : engine == LiteralEngine.Kmp ? new KmpMatcher(patterns, fold)
        : AhoCorasickAutomaton.Build(patterns, fold, denseStates, prefilter: engine == LiteralEngine.AhoCorasick);

    /// <summary>Payloads scanned ahead of execution.</summary>
    public long Prescanned => Interlocked.Read(ref _prescanned);

    /// <summary>Evaluations that came with this scanner's prescan, so never scan on the execution thread.</summary>
    public long Found => Interlocked.Read(ref _found);

    /// <summary>Evaluations that scanned on the execution thread (no prescan, or one by another version).</summary>
    public long ScannedInline => Interlocked.Read(ref _scannedInline);

    /// <summary>
    /// Scans a payload's literals ahead of execution; the result names this scanner as its owner, so only
    /// this compiled version takes it. Thread-safe; changes nothing any decision depends on.
    /// </summary>
    public PayloadPrescan Prescan(ReadOnlySpan<byte> payload)
    {
        if (_exact is null && _folded is null)
        {
            return default;
        }
        Interlocked.Increment(ref _prescanned);
        return new PayloadPrescan(this, ScanLiterals(payload));
    }

    /// <summary>A message's scan state at the start of its evaluation: the literals done already when this scanner prescanned it.</summary>
    public ScanCache Start(PayloadPrescan prescan)
    {
        if (!ReferenceEquals(prescan.Owner, this))
        {
            return default;
        }
        Interlocked.Increment(ref _found);
        return new ScanCache { LiteralsScanned = true, LiteralHits = prescan.Hits };
    }

    private ulong ScanLiterals(ReadOnlySpan<byte> payload) => (_exact?.Scan(payload) ?? 0) | (_folded?.Scan(payload) ?? 0);

    /// <summary>Whether any set in <paramref name="sets"/> occurs; scans lazily (unless prescanned) and remembers in <paramref name="cache"/>.</summary>
    public bool AnyHit(ReadOnlySpan<byte> payload, ulong sets, ref ScanCache cache)
    {
        if (!cache.LiteralsScanned)
        {
            cache.LiteralHits = ScanLiterals(payload);
            cache.LiteralsScanned = true;
            Interlocked.Increment(ref _scannedInline);
        }
        if ((cache.LiteralHits & sets) != 0)
        {
            return true;
        }
        var pending = sets & ~cache.RegexChecked;
        for (var i = 0; pending != 0 && i < _regexes.Length; i++)
        {
            var bit = 1UL << i;
            if ((pending & bit) == 0)
            {
                continue;
            }
            pending &= ~bit;
            cache.RegexChecked |= bit;
            if (_regexes[i] is { } r && RegexHit(r, payload))
            {
                cache.RegexHits |= bit;
            }
        }
        return (cache.RegexHits & sets) != 0;
    }

    /// <summary>Operator-facing words for the first hit among <paramref name="sets"/> (called on denials only).</summary>
    public string Describe(ReadOnlySpan<byte> payload, ulong sets)
    {
        foreach (var (matcher, texts) in new[] { (_exact, _exactText), (_folded, _foldedText) })
        {
            if (matcher?.FirstMatch(payload, sets) is { } m)
            {
                return $"pattern \"{texts[m.Pattern]}\" (ending at byte {m.End})";
            }
        }
        for (var i = 0; i < _regexes.Length; i++)
        {
            if ((sets & (1UL << i)) != 0 && _regexes[i] is { } r && RegexHit(r, payload))
            {
                return $"a regular expression of set {_setNames[i]}";
            }
        }
        return "a pattern";
    }

    /// <summary>Which set in <paramref name="sets"/> hit first in set order (for the denial text).</summary>
    public int FirstSet(ulong sets, in ScanCache cache)
    {
        var hits = (cache.LiteralHits | cache.RegexHits) & sets;
        return hits == 0 ? -1 : System.Numerics.BitOperations.TrailingZeroCount(hits);
    }

    /// <summary>Payload bytes as Latin-1 characters: one character per byte, so a regex sees the bytes as they are.</summary>
    private static bool RegexHit(Regex r, ReadOnlySpan<byte> payload)
    {
        var chars = ArrayPool<char>.Shared.Rent(Math.Max(1, payload.Length));
        try
        {
            var n = Encoding.Latin1.GetChars(payload, chars);
            return r.IsMatch(chars.AsSpan(0, n));
        }
        finally
        {
            ArrayPool<char>.Shared.Return(chars);
        }
    }

    private static string Printable(byte[] literal)
    {
        var sb = new StringBuilder(literal.Length);
        foreach (var b in literal.Length > 64 ? literal[..64] : literal)
        {
            sb.Append(b is >= 0x20 and < 0x7F and not (byte)'"' and not (byte)'\\' ? (char)b : $"\\x{b:x2}");
        }
        if (literal.Length > 64)
        {
            sb.Append("...");
        }
        return sb.ToString();
    }
}

/// <summary>What one message's scan has found so far; lives for one evaluation.</summary>
internal struct ScanCache
{
    public bool LiteralsScanned;
    public ulong LiteralHits;
    public ulong RegexChecked;
    public ulong RegexHits;
}
