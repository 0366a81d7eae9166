using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.PreSq;

/// <summary>
/// Groups what passed the pre-SQ's checks into ordering-request payloads, closing a batch when it
/// reaches its item or byte limit, or when its first item has waited the maximum delay, whichever
/// comes first: batches grow with load and latency stays bounded when idle. Items are copied into a
/// pooled buffer as they arrive, so the caller may reuse its frame buffers at once. Not thread-safe.
/// </summary>
public sealed class OrderingBatcher : IDisposable
{
    private const int HeaderBytes = 9;

    private readonly int _origin;
    private readonly int _maxItems;
    private readonly int _maxBytes;
    private readonly long _maxDelayMs;
    private readonly CanonicalWriter _w = new(64 * 1024);
    private int _count;
    private long _openedAt;

    public OrderingBatcher(int origin, PreSqOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        _origin = origin;
        _maxItems = Math.Min(options.BatchMaxItems, EnvelopeLimits.MaxItems);
        _maxBytes = Math.Min(options.BatchMaxBytes, EnvelopeLimits.MaxOrderingPayloadBytes);
        _maxDelayMs = options.BatchMaxDelayMs;
        Open();
    }

    public int Count => _count;

    /// <summary>When the open batch must close (null when empty).</summary>
    public long? Deadline => _count == 0 ? null : _openedAt + _maxDelayMs;

    /// <summary>Adds an item; returns the closed payload if this item filled the batch.</summary>
    public byte[]? Add(ReadOnlySpan<byte> item, long nowMs)
    {
        if (item.IsEmpty)
        {
            throw new ArgumentException("empty item", nameof(item));
        }
        byte[]? closed = null;
        if (_count > 0 && _w.Length + 4 + item.Length > _maxBytes)
        {
            closed = Close();
        }
        if (_count == 0)
        {
            _openedAt = nowMs;
        }
        _w.Bytes(item);
        _count++;
        if (_count >= _maxItems || _w.Length >= _maxBytes)
        {
            // Only one batch can close per call: the one before this item, or this one.
            return closed ?? Close();
        }
        return closed;
    }

    /// <summary>Closes the batch if its delay is up.</summary>
    public byte[]? Poll(long nowMs) => _count > 0 && nowMs >= _openedAt + _maxDelayMs ? Close() : null;

    /// <summary>Closes whatever is open (shutdown).</summary>
    public byte[]? Flush() => _count > 0 ? Close() : null;

    public void Dispose() => _w.Dispose();

    private void Open()
    {
        _w.Reset();
        _w.U8((byte)StructureKind.OrderingRequest);
        _w.Id(_origin);
        _w.Skip(4);
        _count = 0;
    }

    private byte[] Close()
    {
        _w.PatchU32(5, (uint)_count);
        var payload = _w.ToArray();
        Open();
        return payload;
    }
}
