using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Replica;

/// <summary>A message that passed (e) but arrived ahead of its sender's expected number.</summary>
/// <param name="Prescan">The rules' prescan of the payload; not part of agreed state (a restored buffer has none, and rules decide the same either way).</param>
internal sealed record HeldMessage(int Sender, long Seq, int Receiver, byte[] Data, long Deadline, PayloadPrescan Prescan = default);

/// <summary>
/// The bounded reorder buffer of paper 4.3.3. A message whose number is above the sender's expected
/// one (by at most the threshold) waits here, so rules see each sender's messages in sequence order
/// even when the total order interleaved them differently. A sender's held messages are released in
/// order when the gap fills, or, if the gap persists while <c>patience</c> other messages are
/// processed, all of them at once (the replica gives up waiting). Deadlines count processed messages,
/// not time, so they are agreed.
/// </summary>
internal sealed class ReorderBuffer
{
    private readonly SortedDictionary<int, SortedDictionary<long, HeldMessage>> _bySender = [];
    private readonly SortedSet<(long Deadline, int Sender, long Seq)> _deadlines = [];

    private readonly Dictionary<int, long> _senderBytes = [];

    public int Count { get; private set; }

    /// <summary>Charged bytes (<see cref="ReplicaSieveOptions.ChargedBytes"/>) of everything held.</summary>
    public long Bytes { get; private set; }

    public long BytesOf(int sender) => _senderBytes.GetValueOrDefault(sender);

    public bool Contains(int sender, long seq) => _bySender.TryGetValue(sender, out var m) && m.ContainsKey(seq);

    public void Hold(HeldMessage message)
    {
        if (!_bySender.TryGetValue(message.Sender, out var m))
        {
            m = [];
            _bySender.Add(message.Sender, m);
        }
        m.Add(message.Seq, message);
        _deadlines.Add((message.Deadline, message.Sender, message.Seq));
        Count++;
        var charged = ReplicaSieveOptions.ChargedBytes(message.Data.Length);
        Bytes += charged;
        _senderBytes[message.Sender] = BytesOf(message.Sender) + charged;
    }

    /// <summary>Takes the sender's held messages that continue the sequence from <paramref name="expected"/>.</summary>
    public List<HeldMessage> TakeConsecutive(int sender, long expected)
    {
        var taken = new List<HeldMessage>();
        if (!_bySender.TryGetValue(sender, out var m))
        {
            return taken;
        }
        while (m.Remove(expected, out var h))
        {
            taken.Add(h);
            Forget(h);
            expected++;
        }
        if (m.Count == 0)
        {
            _bySender.Remove(sender);
        }
        return taken;
    }

    /// <summary>Takes the sender's lowest held message if it is below <paramref name="below"/>.</summary>
    public HeldMessage? TakeLowest(int sender, long below)
    {
        if (!_bySender.TryGetValue(sender, out var m) || m.Count == 0)
        {
            return null;
        }
        var first = m.First();
        if (first.Key >= below)
        {
            return null;
        }
        m.Remove(first.Key);
        Forget(first.Value);
        if (m.Count == 0)
        {
            _bySender.Remove(sender);
        }
        return first.Value;
    }

    /// <summary>
    /// The first sender whose oldest-deadline message expired at <paramref name="processed"/>, with
    /// all its held messages in order; null when nothing expired.
    /// </summary>
    public List<HeldMessage>? TakeExpired(long processed)
    {
        if (_deadlines.Count == 0 || _deadlines.Min.Deadline > processed)
        {
            return null;
        }
        var sender = _deadlines.Min.Sender;
        var m = _bySender[sender];
        var taken = m.Values.ToList();
        foreach (var h in taken)
        {
            Forget(h);
        }
        _bySender.Remove(sender);
        return taken;
    }

    public void WriteTo(CanonicalWriter w)
    {
        w.Id(Count);
        foreach (var m in _bySender.Values)
        {
            foreach (var h in m.Values)
            {
                w.Id(h.Sender);
                w.Seq(h.Seq);
                w.Id(h.Receiver);
                w.I64(h.Deadline);
                w.Bytes(h.Data);
            }
        }
    }

    public static ReorderBuffer ReadFrom(ref CanonicalReader r)
    {
        var b = new ReorderBuffer();
        var n = r.Count(int.MaxValue, "held count");
        for (var i = 0; i < n; i++)
        {
            var sender = r.Id("held sender");
            var seq = r.Seq("held seq");
            var receiver = r.Id("held receiver");
            var deadline = r.I64("held deadline");
            var h = new HeldMessage(sender, seq, receiver, r.Bytes(EnvelopeLimits.MaxDataBytes, "held data").ToArray(), deadline);
            if (b.Contains(h.Sender, h.Seq))
            {
                throw new MalformedEnvelopeException("held message twice");
            }
            b.Hold(h);
        }
        return b;
    }

    private void Forget(HeldMessage h)
    {
        _deadlines.Remove((h.Deadline, h.Sender, h.Seq));
        Count--;
        var charged = ReplicaSieveOptions.ChargedBytes(h.Data.Length);
        Bytes -= charged;
        var left = BytesOf(h.Sender) - charged;
        if (left == 0)
        {
            _senderBytes.Remove(h.Sender);
        }
        else
        {
            _senderBytes[h.Sender] = left;
        }
    }
}
