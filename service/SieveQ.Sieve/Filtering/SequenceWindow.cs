using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Filtering;

public enum SequenceCheck
{
    Accepted,
    Replay,
    TooOld,
    TooFarAhead,
}

/// <summary>
/// Checks (b) and the sequence part of (e): one sender's sliding window of seen sequence numbers.
/// A circular bitmap of <see cref="Size"/> bits covers (highest - Size, highest]; below that a number
/// is too old to tell (treated like a replay), above highest + maxAhead it is too far ahead.
/// <para>
/// The pre-SQ must be able to undo a mark when the MAC then fails (stage (c)), or a forged frame
/// would burn the genuine message's number. The last mark is remembered, with a copy of the bitmap
/// when the mark moved the window, so <see cref="UndoLastMark"/> restores the state exactly. One
/// undo slot suffices because the pre-SQ checks the MAC right after marking, before the next frame.
/// </para>
/// </summary>
public sealed class SequenceWindow
{
    private readonly int _size;
    private readonly long _maxAhead;
    private readonly bool _adoptFirst;
    private readonly ulong[] _bits;
    private readonly ulong[] _undoBits;
    private long _highest;
    private long _contiguous;
    private long _undoHighest;
    private long _undoContiguous;
    private long _undoSeq;
    private bool _undoCopied;

    /// <param name="size">Window size in bits, a multiple of 64.</param>
    /// <param name="maxAhead">How far above the highest seen a number may jump.</param>
    /// <param name="adoptFirst">
    /// Pre-SQs are stateless and may take over a sender mid-stream, so the first number they see sets
    /// the window; replicas keep state for every sender from its first message and do not adopt.
    /// </param>
    public SequenceWindow(int size, long maxAhead, bool adoptFirst)
    {
        if (size < 64 || size % 64 != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(size), "window size must be a positive multiple of 64");
        }
        ArgumentOutOfRangeException.ThrowIfLessThan(maxAhead, 1);
        _size = size;
        _maxAhead = maxAhead;
        _adoptFirst = adoptFirst;
        _bits = new ulong[size / 64];
        _undoBits = new ulong[size / 64];
    }

    public int Size => _size;

    /// <summary>Highest number marked (0: none yet).</summary>
    public long Highest => _highest;

    /// <summary>
    /// Every number up to this is marked or fell out of the window. Replicas report it in ACKRES as
    /// the sender's acknowledged prefix.
    /// </summary>
    public long ContiguousUpTo
    {
        get
        {
            var c = Math.Max(_contiguous, _highest - _size);
            while (c < _highest && IsSet(c + 1))
            {
                c++;
            }
            _contiguous = c;
            return c;
        }
    }

    /// <summary>What <see cref="TryMark"/> would say, without marking.</summary>
    public SequenceCheck Probe(long seq)
    {
        if (seq < 1)
        {
            return SequenceCheck.TooOld;
        }
        if (_highest == 0 && _adoptFirst)
        {
            return SequenceCheck.Accepted;
        }
        if (seq > _highest)
        {
            return seq - _highest > _maxAhead ? SequenceCheck.TooFarAhead : SequenceCheck.Accepted;
        }
        if (seq <= _highest - _size || seq <= _contiguous)
        {
            return seq <= _highest - _size ? SequenceCheck.TooOld : SequenceCheck.Replay;
        }
        return IsSet(seq) ? SequenceCheck.Replay : SequenceCheck.Accepted;
    }

    public bool Contains(long seq) => Probe(seq) is SequenceCheck.Replay or SequenceCheck.TooOld;

    public SequenceCheck TryMark(long seq) => TryMark(seq, adoptAhead: false);

    /// <param name="adoptAhead">
    /// Take a number beyond the jump limit as if it were the first one seen (a pre-SQ whose window went
    /// stale). Undoable like any mark.
    /// </param>
    public SequenceCheck TryMark(long seq, bool adoptAhead)
    {
        var verdict = Probe(seq);
        if (verdict == SequenceCheck.TooFarAhead && adoptAhead)
        {
            verdict = SequenceCheck.Accepted;
        }
        if (verdict != SequenceCheck.Accepted)
        {
            return verdict;
        }
        _undoSeq = seq;
        _undoHighest = _highest;
        _undoContiguous = _contiguous;
        _undoCopied = seq > _highest;
        if (_undoCopied)
        {
            _bits.CopyTo(_undoBits, 0);
            // An adopted first number leaves the numbers below it unmarked: this pre-SQ has not seen
            // them, and the sender may still retransmit them through it.
            ClearRange(_highest + 1, seq);
            _highest = seq;
        }
        Set(seq);
        return SequenceCheck.Accepted;
    }

    /// <summary>
    /// Forgets that <paramref name="seq"/> was seen: the replicas refused it untaken (an agreed result says so),
    /// so the sender's retransmission of it must pass again. Numbers outside the window are left as they are.
    /// </summary>
    public void Unmark(long seq)
    {
        if (seq < 1 || seq > _highest || seq <= _highest - _size)
        {
            return;
        }
        if (seq <= _contiguous)
        {
            _contiguous = seq - 1;
        }
        Clear(seq);
        _undoSeq = 0;
    }

    /// <summary>Forgets the last successful <see cref="TryMark"/> (stage (c)'s undo of stage (b)).</summary>
    public void UndoLastMark()
    {
        if (_undoSeq == 0)
        {
            throw new InvalidOperationException("no mark to undo");
        }
        if (_undoCopied)
        {
            _undoBits.CopyTo(_bits, 0);
        }
        else
        {
            Clear(_undoSeq);
        }
        _highest = _undoHighest;
        _contiguous = _undoContiguous;
        _undoSeq = 0;
    }

    /// <summary>
    /// The sender declares every number below <paramref name="below"/> settled (acknowledged, or
    /// skipped for good: numbers reserved before a crash and never used). They then count as seen, so
    /// the acknowledged prefix can move past them.
    /// </summary>
    public void Abandon(long below)
    {
        var upTo = below - 1;
        if (upTo <= _contiguous)
        {
            return;
        }
        if (upTo > _highest)
        {
            ClearRange(_highest + 1, upTo);
            _highest = upTo;
        }
        _contiguous = upTo;
        _undoSeq = 0;
    }

    public void WriteTo(CanonicalWriter w)
    {
        ArgumentNullException.ThrowIfNull(w);
        w.Seq(_highest);
        w.Seq(ContiguousUpTo);
        foreach (var b in _bits)
        {
            w.U64(b);
        }
    }

    public void ReadFrom(ref CanonicalReader r)
    {
        _highest = r.Seq("window highest");
        _contiguous = r.Seq("window contiguous");
        if (_contiguous > _highest)
        {
            throw new MalformedEnvelopeException("window contiguous prefix above highest");
        }
        for (var i = 0; i < _bits.Length; i++)
        {
            _bits[i] = System.Buffers.Binary.BinaryPrimitives.ReadUInt64LittleEndian(r.Take(8, "window bits"));
        }
        _undoSeq = 0;
    }

    private bool IsSet(long seq)
    {
        var slot = (int)(seq % _size);
        return (_bits[slot >> 6] & (1UL << (slot & 63))) != 0;
    }

    private void Set(long seq)
    {
        var slot = (int)(seq % _size);
        _bits[slot >> 6] |= 1UL << (slot & 63);
    }

    private void Clear(long seq)
    {
        var slot = (int)(seq % _size);
        _bits[slot >> 6] &= ~(1UL << (slot & 63));
    }

    private void ClearRange(long from, long to)
    {
        if (to - from + 1 >= _size)
        {
            Array.Clear(_bits);
            return;
        }
        for (var s = from; s <= to; s++)
        {
            Clear(s);
        }
    }
}
