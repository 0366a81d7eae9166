namespace SieveQ.Sieve.Sender;

/// <summary>
/// Durable high-water mark of the sequence numbers a sender may already have handed out. Save must
/// be durable (fsync) when it returns: a number is used only after the block containing it is saved.
/// </summary>
public interface ISequenceStore
{
    /// <summary>The saved mark, 0 when nothing was ever reserved.</summary>
    long LoadReserved();

    void SaveReserved(long reservedUpTo);

    /// <summary>
    /// Lowers the saved mark to <paramref name="lastUsed"/>, the last number handed out, once the sender stopped; durable
    /// when it returns. A crash during it leaves the old (higher) mark or the new one, never less.
    /// </summary>
    void LowerReserved(long lastUsed);
}

/// <summary>For tests and for senders that accept losing uniqueness across process restarts.</summary>
public sealed class InMemorySequenceStore : ISequenceStore
{
    private long _reserved;

    public int Saves { get; private set; }

    public long LoadReserved() => _reserved;

    public void SaveReserved(long reservedUpTo)
    {
        _reserved = reservedUpTo;
        Saves++;
    }

    public void LowerReserved(long lastUsed) => SaveReserved(lastUsed);
}
