namespace SieveQ.Sieve.Sender;

/// <summary>
/// Sequence numbers that never repeat, even across a crash: numbers are handed out only from a block
/// whose upper end is already durable in the <see cref="ISequenceStore"/>. A restart resumes above the
/// saved mark, skipping what was left of the last block (the sender tells the replicas through
/// ACKREQ's lowestPending that those numbers will never come). One fsync per block, not per message.
/// An orderly stop (<see cref="ReleaseUnused"/>) lowers the mark to the last number handed out, so a clean restart
/// skips one number instead of the rest of the block; only a crash costs up to a block.
/// </summary>
public sealed class SenderSequencer
{
    private readonly ISequenceStore _store;
    private readonly int _block;
    private long _next;
    private long _reservedUpTo;

    public SenderSequencer(ISequenceStore store, int blockSize = 1024)
    {
        ArgumentNullException.ThrowIfNull(store);
        ArgumentOutOfRangeException.ThrowIfLessThan(blockSize, 1);
        _store = store;
        _block = blockSize;
        _reservedUpTo = store.LoadReserved();
        // A restarted run skips one number beyond the saved mark, so its first number is strictly above
        // anything the previous run could have reached, even its "next" (ACKREQ nonces build on it).
        _next = _reservedUpTo == 0 ? 1 : _reservedUpTo + 2;
    }

    /// <summary>The number the next <see cref="Next"/> returns.</summary>
    public long Peek => _next;

    /// <summary>The first number of this run: everything below was used or abandoned by an earlier run.</summary>
    public long FirstOfRun { get; private set; } = -1;

    /// <summary>
    /// Gives back the unused rest of the reserved block: saves the last number handed out as the mark. Call only once
    /// no more numbers will be taken from this instance (the sender stopped); a later <see cref="Next"/> reserves anew.
    /// </summary>
    public void ReleaseUnused()
    {
        var last = _next - 1;
        if (last < _reservedUpTo && last >= 1)
        {
            _store.LowerReserved(last);
            _reservedUpTo = last;
            // Keep this instance consistent with what a restart would do: above the mark, with the one-number gap.
            _next = last + 2;
        }
    }

    public long Next()
    {
        if (_next > _reservedUpTo)
        {
            var upTo = _next + _block - 1;
            _store.SaveReserved(upTo);
            _reservedUpTo = upTo;
        }
        if (FirstOfRun < 0)
        {
            FirstOfRun = _next;
        }
        return _next++;
    }
}
