using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace SieveQ.Rules.Matching;

/// <summary>
/// Aho-Corasick over bytes: every literal in one left-to-right pass, so the cost per payload byte does
/// not grow with the number of patterns. States are numbered breadth-first; the shallow ones (where a
/// scan over ordinary traffic spends nearly all its time) get a full transition row with failure links
/// folded in (a DFA), the deep ones keep sorted child lists plus a failure link. A failure step always
/// lands on a shallower state, so a scan takes at most two steps per byte, amortised.
/// <para>
/// Rows are indexed by byte class, not by byte: all bytes that occur in no literal behave alike and
/// share a class, and ASCII case folding is part of the class map. Fewer columns keep the hot rows in
/// the first-level cache, which is what bounds a scan: each step waits for the previous load. Each
/// state carries the union of the pattern sets ending there or at any of its suffixes (a flag in the
/// row entry says whether it is non-empty), so reporting costs nothing on bytes that end no pattern.
/// When few distinct bytes can start a pattern, a scan idling at the root jumps to the next of them
/// with a vectorised search (still linear, with a smaller constant).
/// </para>
/// <para>
/// When many bytes can start one and every literal has at least four bytes, a scan does not run the
/// automaton at all: a <see cref="PrefixGramFilter"/> rules out nearly every position, and from each
/// position it lets through the trie is walked forward (anchored there) for the literals that start at
/// it. A walk is short (at most the longest literal), and all walks of one scan share a budget of twice
/// the payload's length; traffic built to pass the filter everywhere exhausts it, and the scan finishes
/// with the automaton, so the cost per payload stays linear whatever the payload.
/// </para>
/// </summary>
public sealed class AhoCorasickAutomaton : ILiteralMatcher
{
    /// <summary>Memory for dense rows; beyond it states stay sparse.</summary>
    public const int DenseBudgetBytes = 4 << 20;

    /// <summary>Set in a dense entry when the target state reports a match.</summary>
    private const int OutputFlag = 1 << 30;

    /// <summary>Below this many distinct first bytes, a prefilter pays for its call.</summary>
    private const int MaxPrefilterBytes = 16;

    private readonly byte[] _fold;
    private readonly byte[] _classes;
    private readonly int _shift;
    private readonly int _denseCount;
    private readonly int[] _dense;
    private readonly int[] _fail;
    private readonly int[] _childStart;
    private readonly byte[] _childBytes;
    private readonly int[] _childTargets;
    private readonly ulong[] _sets;
    private readonly int[] _ownPattern;
    private readonly ulong[] _ownSets;
    private readonly ulong _allSets;
    private readonly SearchValues<byte>? _starts;
    private readonly PrefixGramFilter? _grams;
    private readonly int _minLength;
    private long _gramFallbacks;

    private AhoCorasickAutomaton(Tables t, PrefixGramFilter? grams, int minLength)
    {
        _fold = t.Fold;
        _classes = t.Classes;
        _shift = t.Shift;
        _denseCount = t.DenseCount;
        _dense = t.Dense;
        _fail = t.Fail;
        _childStart = t.ChildStart;
        _childBytes = t.ChildBytes;
        _childTargets = t.ChildTargets;
        _sets = t.Sets;
        _ownPattern = t.OwnPattern;
        _ownSets = t.OwnSets;
        _allSets = t.AllSets;
        _starts = t.Starts;
        _grams = grams;
        _minLength = minLength;
    }

    public int StateCount => _fail.Length;

    public int DenseStateCount => _denseCount;

    /// <summary>Columns per dense row (a power of two at least the number of byte classes).</summary>
    public int RowWidth => 1 << _shift;

    /// <summary>Whether scans screen positions with a <see cref="PrefixGramFilter"/> before walking the trie.</summary>
    public bool Prefiltered => _grams is not null;

    /// <summary>Scans whose trie walks used up their budget and finished with the automaton.</summary>
    public long PrefilterFallbacks => Interlocked.Read(ref _gramFallbacks);

    /// <param name="maxDenseStates">Cap on dense states; by default as many as <see cref="DenseBudgetBytes"/> holds.</param>
    /// <param name="prefilter">Screen positions by their first four bytes when the literals allow (the benchmark turns it off to compare).</param>
    public static AhoCorasickAutomaton Build(IReadOnlyList<LiteralPattern> patterns, bool asciiCaseInsensitive, int maxDenseStates = int.MaxValue, bool prefilter = true)
    {
        ArgumentNullException.ThrowIfNull(patterns);
        var fold = asciiCaseInsensitive ? AsciiFold.Lower : AsciiFold.Identity;
        var trie = new TrieBuilder();
        var folded = new List<byte[]>(patterns.Count);
        ulong all = 0;
        for (var p = 0; p < patterns.Count; p++)
        {
            var (bytes, set) = (patterns[p].Bytes, patterns[p].Set);
            ArgumentOutOfRangeException.ThrowIfGreaterThan((uint)set, 63u);
            if (bytes.Length == 0)
            {
                throw new ArgumentException("empty literal", nameof(patterns));
            }
            folded.Add(AsciiFold.Apply(bytes, fold));
            trie.Add(folded[^1], p, set);
            all |= 1UL << set;
        }
        var tables = trie.Compile(fold, all, maxDenseStates);
        // A first-byte search (few start bytes) beats the screen, so the screen is built only without one.
        var grams = prefilter && tables.Starts is null ? PrefixGramFilter.Build(folded, asciiCaseInsensitive) : null;
        return new AhoCorasickAutomaton(tables, grams, folded.Count == 0 ? 0 : folded.Min(f => f.Length));
    }

    public ulong Scan(ReadOnlySpan<byte> text) =>
        _starts is not null ? ScanFromStarts(text, _starts)
        : _grams is not null ? ScanByGrams(text, _grams)
        : ScanAll(text);

    /// <summary>Positions that pass the filter get an anchored trie walk; see the class remarks for the budget.</summary>
    private ulong ScanByGrams(ReadOnlySpan<byte> text, PrefixGramFilter grams)
    {
        ulong hits = 0;
        var budget = 2 * text.Length + 64;
        ref var start = ref MemoryMarshal.GetReference(text);
        // Every literal has _minLength >= 4 bytes, so a start up to here leaves four bytes to read.
        for (var i = 0; i <= text.Length - _minLength; i++)
        {
            if (!grams.MayStart(Unsafe.ReadUnaligned<uint>(ref Unsafe.Add(ref start, i))))
            {
                continue;
            }
            hits |= WalkFrom(text, i, ref budget);
            if (hits == _allSets)
            {
                break;
            }
            if (budget < 0)
            {
                Interlocked.Increment(ref _gramFallbacks);
                RulesMetrics.PrefilterFallbacks.Add(1);
                return hits | ScanAll(text);
            }
        }
        return hits;
    }

    /// <summary>The sets of the literals that start at <paramref name="at"/>: the trie followed from its root.</summary>
    private ulong WalkFrom(ReadOnlySpan<byte> text, int at, ref int budget)
    {
        ulong hits = 0;
        var s = 0;
        for (var i = at; i < text.Length; i++)
        {
            budget--;
            s = Child(s, _fold[text[i]]);
            if (s < 0)
            {
                break;
            }
            hits |= _ownSets[s];
        }
        return hits;
    }

    /// <summary>The plain loop: one dependent load per byte in the dense part, no unpredictable branch.</summary>
    private ulong ScanAll(ReadOnlySpan<byte> text)
    {
        var dense = _dense;
        var classes = _classes;
        var shift = _shift;
        var denseCount = _denseCount;
        ulong hits = 0;
        var s = 0;
        foreach (var b in text)
        {
            if (s < denseCount)
            {
                var e = dense[(s << shift) | classes[b]];
                s = e & ~OutputFlag;
                if (e == s)
                {
                    continue;
                }
            }
            else
            {
                s = SparseStep(s, _fold[b]);
                if (_sets[s] == 0)
                {
                    continue;
                }
            }
            hits |= _sets[s];
            if (hits == _allSets)
            {
                break; // nothing more to learn from the rest of the payload
            }
        }
        return hits;
    }

    /// <summary>Few bytes can start a pattern: at the root, jump to the next of them with a vectorised search.</summary>
    private ulong ScanFromStarts(ReadOnlySpan<byte> text, SearchValues<byte> starts)
    {
        ulong hits = 0;
        var s = 0;
        for (var i = 0; i < text.Length; i++)
        {
            if (s == 0)
            {
                var skip = text[i..].IndexOfAny(starts);
                if (skip < 0)
                {
                    break;
                }
                i += skip;
            }
            s = s < _denseCount ? _dense[(s << _shift) | _classes[text[i]]] & ~OutputFlag : SparseStep(s, _fold[text[i]]);
            if (_sets[s] != 0)
            {
                hits |= _sets[s];
                if (hits == _allSets)
                {
                    break;
                }
            }
        }
        return hits;
    }

    public LiteralMatch? FirstMatch(ReadOnlySpan<byte> text, ulong wanted)
    {
        var s = 0;
        for (var i = 0; i < text.Length; i++)
        {
            s = s < _denseCount ? _dense[(s << _shift) | _classes[text[i]]] & ~OutputFlag : SparseStep(s, _fold[text[i]]);
            if ((_sets[s] & wanted) == 0)
            {
                continue;
            }
            // Walk the suffix chain for the longest pattern of a wanted set ending here.
            for (var t = s; t != 0; t = _fail[t])
            {
                if ((_ownSets[t] & wanted) != 0)
                {
                    return new LiteralMatch(_ownPattern[t], i + 1);
                }
            }
        }
        return null;
    }

    /// <summary>A step from a sparse state on a folded byte.</summary>
    private int SparseStep(int s, int b)
    {
        while (s >= _denseCount)
        {
            var next = Child(s, b);
            if (next >= 0)
            {
                return next;
            }
            s = _fail[s];
        }
        return _dense[(s << _shift) | _classes[b]] & ~OutputFlag;
    }

    private int Child(int s, int b)
    {
        int lo = _childStart[s], hi = _childStart[s + 1];
        if (hi - lo <= 8)
        {
            for (var i = lo; i < hi; i++)
            {
                if (_childBytes[i] == b)
                {
                    return _childTargets[i];
                }
            }
            return -1;
        }
        hi--;
        while (lo <= hi)
        {
            var mid = (lo + hi) >>> 1;
            var c = _childBytes[mid];
            if (c == b)
            {
                return _childTargets[mid];
            }
            if (c < b)
            {
                lo = mid + 1;
            }
            else
            {
                hi = mid - 1;
            }
        }
        return -1;
    }

    private sealed record Tables(byte[] Fold, byte[] Classes, int Shift, int DenseCount, int[] Dense, int[] Fail, int[] ChildStart,
        byte[] ChildBytes, int[] ChildTargets, ulong[] Sets, int[] OwnPattern, ulong[] OwnSets, ulong AllSets, SearchValues<byte>? Starts);

    /// <summary>The trie under construction, then its breadth-first compilation.</summary>
    private sealed class TrieBuilder
    {
        private readonly List<SortedList<byte, int>?> _children = [null];
        private readonly List<int> _pattern = [-1];
        private readonly List<ulong> _sets = [0];

        public void Add(byte[] bytes, int pattern, int set)
        {
            var s = 0;
            foreach (var b in bytes)
            {
                var kids = _children[s] ??= [];
                if (!kids.TryGetValue(b, out var next))
                {
                    next = _children.Count;
                    _children.Add(null);
                    _pattern.Add(-1);
                    _sets.Add(0);
                    kids.Add(b, next);
                }
                s = next;
            }
            // Identical literals share a state: the first names the match, the sets accumulate.
            if (_pattern[s] < 0)
            {
                _pattern[s] = pattern;
            }
            _sets[s] |= 1UL << set;
        }

        public Tables Compile(byte[] fold, ulong all, int maxDense)
        {
            var n = _children.Count;
            // Breadth-first numbering, children in byte order: deterministic, and a failure link always
            // points to a smaller number, so dense rows can be filled in one forward pass.
            var order = new int[n];
            var newId = new int[n];
            var head = 0;
            var tail = 0;
            order[tail++] = 0;
            while (head < tail)
            {
                var old = order[head++];
                if (_children[old] is { } kids)
                {
                    foreach (var kv in kids)
                    {
                        order[tail++] = kv.Value;
                    }
                }
            }
            for (var i = 0; i < n; i++)
            {
                newId[order[i]] = i;
            }

            var childStart = new int[n + 1];
            var edges = 0;
            for (var i = 0; i < n; i++)
            {
                childStart[i] = edges;
                edges += _children[order[i]]?.Count ?? 0;
            }
            childStart[n] = edges;
            var childBytes = new byte[edges];
            var childTargets = new int[edges];
            var ownPattern = new int[n];
            var ownSets = new ulong[n];
            for (var i = 0; i < n; i++)
            {
                ownPattern[i] = _pattern[order[i]];
                ownSets[i] = _sets[order[i]];
                var at = childStart[i];
                if (_children[order[i]] is { } kids)
                {
                    foreach (var kv in kids)
                    {
                        childBytes[at] = kv.Key;
                        childTargets[at++] = newId[kv.Value];
                    }
                }
            }

            var (classes, classCount) = ByteClasses(fold, childBytes);
            var shift = 0;
            while (1 << shift < classCount)
            {
                shift++;
            }
            var denseCount = Math.Clamp(DenseBudgetBytes / ((1 << shift) * sizeof(int)), 1, Math.Min(n, Math.Max(1, maxDense)));
            var dense = new int[denseCount << shift];
            var fail = new int[n];
            var sets = new ulong[n];
            for (var s = 0; s < n; s++)
            {
                sets[s] = ownSets[s] | (s > 0 ? sets[fail[s]] : 0);
                for (var e = childStart[s]; e < childStart[s + 1]; e++)
                {
                    fail[childTargets[e]] = s == 0 ? 0 : Delta(fail[s], classes[childBytes[e]], childBytes[e], dense, denseCount, shift, childStart, childBytes, childTargets, fail);
                }
                if (s < denseCount)
                {
                    var row = s << shift;
                    for (var c = 0; c < 1 << shift; c++)
                    {
                        dense[row | c] = s == 0 ? 0 : dense[(fail[s] << shift) | c];
                    }
                    for (var e = childStart[s]; e < childStart[s + 1]; e++)
                    {
                        dense[row | classes[childBytes[e]]] = childTargets[e];
                    }
                }
            }
            // Only now is every state's output known (a failure target may come later in the same level).
            for (var i = 0; i < dense.Length; i++)
            {
                if (sets[dense[i]] != 0)
                {
                    dense[i] |= OutputFlag;
                }
            }
            return new Tables(fold, classes, shift, denseCount, dense, fail, childStart, childBytes, childTargets, sets, ownPattern, ownSets,
                all, Starts(fold, childBytes, childStart));
        }

        /// <summary>
        /// Class 0 for every byte no literal contains (they all lead back towards the root alike); one
        /// class per distinct (folded) literal byte otherwise. Raw bytes map through the fold first.
        /// </summary>
        private static (byte[] Classes, int Count) ByteClasses(byte[] fold, byte[] childBytes)
        {
            var used = new bool[256];
            foreach (var b in childBytes)
            {
                used[b] = true;
            }
            var classOf = new int[256];
            var count = 1;
            for (var b = 0; b < 256; b++)
            {
                if (used[b])
                {
                    classOf[b] = count++;
                }
            }
            if (count > 256)
            {
                // All 256 byte values occur: no shared class is needed, so the class is the byte.
                count = 256;
                for (var b = 0; b < 256; b++)
                {
                    classOf[b] = b;
                }
            }
            var classes = new byte[256];
            for (var b = 0; b < 256; b++)
            {
                classes[b] = (byte)classOf[fold[b]];
            }
            return (classes, count);
        }

        /// <summary>The raw bytes that leave the root, when they are few enough for a prefilter to pay.</summary>
        private static SearchValues<byte>? Starts(byte[] fold, byte[] childBytes, int[] childStart)
        {
            var first = new List<byte>();
            for (var b = 0; b < 256; b++)
            {
                for (var e = childStart[0]; e < childStart[1]; e++)
                {
                    if (childBytes[e] == fold[b])
                    {
                        first.Add((byte)b);
                        break;
                    }
                }
            }
            return first.Count <= MaxPrefilterBytes ? SearchValues.Create([.. first]) : null;
        }

        /// <summary>The automaton's transition from <paramref name="s"/> (already complete) on a folded byte.</summary>
        private static int Delta(int s, byte cls, byte b, int[] dense, int denseCount, int shift, int[] childStart, byte[] childBytes, int[] childTargets, int[] fail)
        {
            while (s >= denseCount)
            {
                for (var e = childStart[s]; e < childStart[s + 1]; e++)
                {
                    if (childBytes[e] == b)
                    {
                        return childTargets[e];
                    }
                }
                s = fail[s];
            }
            return dense[(s << shift) | cls];
        }
    }
}
