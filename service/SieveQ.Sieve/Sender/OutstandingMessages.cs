namespace SieveQ.Sieve.Sender;

/// <summary>
/// Messages sent and not yet acknowledged by f+1 replicas, each with its retransmission deadline and
/// the pre-SQ it last went through. Deadlines are kept in a sorted set so a tick touches only what is due.
/// </summary>
internal sealed class OutstandingMessages
{
    internal sealed class Entry
    {
        public required byte[] Message { get; init; }
        public int PreSq { get; set; }
        public long Deadline { get; set; }
        public int Attempts { get; set; }
        /// <summary>When it first went out: acknowledgement delays are sampled only from messages sent once (Karn).</summary>
        public long FirstSentAt { get; init; }
        /// <summary>The sender's count of pre-SQ moves when it last went out.</summary>
        public long SentAtMove { get; set; }
    }

    private readonly SortedDictionary<long, Entry> _bySeq = [];
    private readonly SortedSet<(long Deadline, long Seq)> _deadlines = [];

    public int Count => _bySeq.Count;

    public long? LowestSeq => _bySeq.Count == 0 ? null : _bySeq.Keys.First();

    public long? NextDeadline => _deadlines.Count == 0 ? null : _deadlines.Min.Deadline;

    public bool TryGet(long seq, out Entry entry) => _bySeq.TryGetValue(seq, out entry!);

    public void Add(long seq, byte[] message, int preSq, long deadline, long sentAt, long move = 0)
    {
        _bySeq.Add(seq, new Entry { Message = message, PreSq = preSq, Deadline = deadline, Attempts = 1, FirstSentAt = sentAt, SentAtMove = move });
        _deadlines.Add((deadline, seq));
    }

    /// <summary>Whether any entry up to <paramref name="upTo"/> has gone out more than once.</summary>
    public bool AnyRetransmittedUpTo(long upTo)
    {
        foreach (var (seq, e) in _bySeq)
        {
            if (seq > upTo)
            {
                return false;
            }
            if (e.Attempts > 1)
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>Removes everything up to <paramref name="upTo"/>; returns how many.</summary>
    public int AcknowledgeUpTo(long upTo)
    {
        var n = 0;
        while (_bySeq.Count > 0)
        {
            var first = _bySeq.First();
            if (first.Key > upTo)
            {
                break;
            }
            _bySeq.Remove(first.Key);
            _deadlines.Remove((first.Value.Deadline, first.Key));
            n++;
        }
        return n;
    }

    /// <summary>Entries whose deadline passed, lowest deadline first; the caller reschedules each.</summary>
    public List<(long Seq, Entry Entry)> Due(long nowMs)
    {
        var due = new List<(long, Entry)>();
        foreach (var (deadline, seq) in _deadlines)
        {
            if (deadline > nowMs)
            {
                break;
            }
            due.Add((seq, _bySeq[seq]));
        }
        return due;
    }

    public void Reschedule(long seq, Entry e, long deadline)
    {
        _deadlines.Remove((e.Deadline, seq));
        e.Deadline = deadline;
        _deadlines.Add((deadline, seq));
    }
}
