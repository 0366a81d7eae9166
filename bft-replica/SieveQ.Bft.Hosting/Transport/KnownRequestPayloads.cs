using SieveQ.Bft.Codec;

namespace SieveQ.Bft.Hosting.Transport;

/// <summary>
/// Request payloads this replica received straight from their clients, by (client, sequence), so that
/// decoding the same request inside a leader's PROPOSE can share the array already held instead of
/// copying the bytes into fresh heap. A follower otherwise copies every request twice, and at full load
/// that second copy is a visible share of a replica's CPU (docs/design-figures.md).
/// <para>
/// Sharing happens only when the bytes in the PROPOSE are identical to the remembered ones, so what a
/// decode returns never depends on what was remembered, only how much it allocates. An entry is taken
/// out when it is shared (a request is proposed once in the normal case). What is never proposed ages out:
/// two generations, each bounded by entries and bytes, the older dropped whole when the newer fills.
/// Thread-safe: client links remember, replica links take, each on its own receive loop. That locked,
/// host-wide state is why it lives here and not in SieveQ.Bft, whose codec only sees
/// <see cref="IKnownRequestPayloads"/>.
/// </para>
/// </summary>
public sealed class KnownRequestPayloads : IKnownRequestPayloads
{
    private readonly object _gate = new();
    private readonly int _maxEntries;
    private readonly long _maxBytes;
    private Dictionary<(int Client, long Sequence), byte[]> _current = [];
    private Dictionary<(int Client, long Sequence), byte[]> _previous = [];
    private long _currentBytes;
    private long _previousBytes;
    private long _shared;
    private long _copied;
    private long _aged;

    /// <param name="maxEntries">Entries per generation.</param>
    /// <param name="maxBytes">Payload bytes per generation.</param>
    /// <remarks>
    /// A request waits here from its arrival until the PROPOSE that carries it, a few hundred milliseconds at
    /// full load: about 300 ordering requests of 20 KB from two pre-SQs. The defaults hold ten times that.
    /// A leader never decodes its own PROPOSEs, so what it remembers only ages out; the bounds are what it costs.
    /// </remarks>
    public KnownRequestPayloads(int maxEntries = 4_096, long maxBytes = 16L << 20)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(maxEntries, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxBytes, 1);
        _maxEntries = maxEntries;
        _maxBytes = maxBytes;
    }

    /// <summary>Decodes that shared a remembered array.</summary>
    public long Shared => Interlocked.Read(ref _shared);

    /// <summary>Decodes that had to copy (not remembered, aged out, or different bytes).</summary>
    public long Copied => Interlocked.Read(ref _copied);

    /// <summary>Remembered payloads dropped unshared with their generation.</summary>
    public long Aged => Interlocked.Read(ref _aged);

    public int Entries
    {
        get
        {
            lock (_gate)
            {
                return _current.Count + _previous.Count;
            }
        }
    }

    public long Bytes
    {
        get
        {
            lock (_gate)
            {
                return _currentBytes + _previousBytes;
            }
        }
    }

    public void Remember(int client, long sequence, byte[] payload)
    {
        ArgumentNullException.ThrowIfNull(payload);
        lock (_gate)
        {
            if (_current.Count >= _maxEntries || _currentBytes + payload.Length > _maxBytes)
            {
                _aged += _previous.Count;
                (_previous, _current) = (_current, _previous);
                _current.Clear();
                _previousBytes = _currentBytes;
                _currentBytes = 0;
            }
            if (_current.TryAdd((client, sequence), payload))
            {
                _currentBytes += payload.Length;
            }
        }
    }

    /// <summary>The remembered array for this request if its bytes equal <paramref name="bytes"/>, else a fresh copy.</summary>
    public byte[] ShareOrCopy(int client, long sequence, ReadOnlySpan<byte> bytes)
    {
        byte[]? known;
        lock (_gate)
        {
            if (_current.Remove((client, sequence), out known))
            {
                _currentBytes -= known.Length;
            }
            else if (_previous.Remove((client, sequence), out known))
            {
                _previousBytes -= known.Length;
            }
        }
        if (known is not null && bytes.SequenceEqual(known))
        {
            Interlocked.Increment(ref _shared);
            return known;
        }
        Interlocked.Increment(ref _copied);
        return bytes.ToArray();
    }
}
