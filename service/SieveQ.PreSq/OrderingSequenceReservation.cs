using SieveQ.Sieve.Hosting.Storage;
using SieveQ.Sieve.Sender;

namespace SieveQ.PreSq;

/// <summary>
/// Lets a pre-SQ restart as the same ordering client. The replicas execute a client's request numbers
/// once each and only inside a window above the highest contiguous one executed, so a restarted client
/// that began again at 1 would get stale or no replies and stall for good; one that skipped numbers
/// would leave a gap that stalls it once the window has moved on.
/// <para>
/// Numbers are reserved durably in blocks (one fsync per <see cref="Block"/> requests). A restart begins
/// right after the previous reservation's start, which is below the highest number the last run used,
/// so nothing is skipped. The numbers it reuses were either executed — the replicas still remember those
/// replies, since at most <see cref="Block"/> of them lie above that start and they keep
/// <c>RepliesRememberedPerClient</c> (checked) — and they answer with the old result (the new batch is
/// lost; its senders retransmit), or they were not, and the new batch fills the number. So the forwarder
/// spends them at start on queries that change nothing, before any batch (<see cref="OrderingForwarder.Start"/>).
/// Should a batch still get one, which cannot be told from the reply, the forwarder treats its sender messages
/// as refused untaken: the pre-SQ forgets having passed them, and the sender's retransmission reaches the
/// replicas, whose own window refuses it if it was taken after all.
/// </para>
/// Called on the event loop before each submission, and by the administrator's rule-set commands from
/// their gRPC handler, hence the lock.
/// </summary>
internal sealed class OrderingSequenceReservation : IDisposable
{
    public const int Block = 128;

    private readonly ISequenceStore _store;
    private readonly Lock _gate = new();
    private long _reserved;
    private long _last;

    public OrderingSequenceReservation(ISequenceStore store)
    {
        _store = store;
        _reserved = store.LoadReserved();
        FirstSequence = Math.Max(0, _reserved - Block);
        ReusedUpTo = _reserved;
        _last = FirstSequence;
    }

    /// <summary>The ordering client numbers its requests from this + 1.</summary>
    public long FirstSequence { get; }

    /// <summary>
    /// The highest number the previous run may have used (0: none). A request numbered up to here may be answered
    /// with the previous run's result for that number, its own items never ordered.
    /// </summary>
    public long ReusedUpTo { get; }

    public static OrderingSequenceReservation Open(string directory)
    {
        Directory.CreateDirectory(directory);
        // The file is held open exclusively: a second process with the same pre-SQ id fails here.
        return new OrderingSequenceReservation(new FileSequenceStore(Path.Combine(directory, "ordering-sequence")));
    }

    /// <summary>Accounts for the next request number before it is used.</summary>
    public void Take()
    {
        lock (_gate)
        {
            _last++;
            if (_last > _reserved)
            {
                _reserved = _last + Block - 1;
                _store.SaveReserved(_reserved);
            }
        }
    }

    public void Dispose() => (_store as IDisposable)?.Dispose();
}
