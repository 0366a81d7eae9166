using System.Threading.Channels;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.PreSq;

/// <summary>
/// One open Exchange call seen from the relay: a bounded queue of events for the sender(s) bound to it
/// and the pump that writes them out. The relay only ever enqueues (never waits on a slow client); the
/// queue drops when full, and a sender whose ACKRES got lost simply asks again.
/// </summary>
internal sealed class SenderStream : IDisposable
{
    private readonly Channel<PreSqEvent> _outbox;
    private readonly CancellationTokenSource _unboundTimer;
    private int _everBound;
    private volatile bool _closed;

    public SenderStream(int queueEvents, TimeSpan unboundTimeout)
    {
        _outbox = Channel.CreateBounded<PreSqEvent>(new BoundedChannelOptions(queueEvents)
        {
            SingleReader = true,
            FullMode = BoundedChannelFullMode.Wait,
        });
        _unboundTimer = new CancellationTokenSource(unboundTimeout);
    }

    /// <summary>Cancelled when the stream stayed unbound too long (an idle stream nobody authenticated).</summary>
    public CancellationToken UnboundExpired => _unboundTimer.Token;

    public bool EverBound => Volatile.Read(ref _everBound) == 1;

    public bool IsClosed => _closed;

    /// <summary>A frame passed every check on this stream: it is no longer an anonymous idle stream.</summary>
    public void MarkBound()
    {
        if (Interlocked.Exchange(ref _everBound, 1) == 0)
        {
            try
            {
                _unboundTimer.CancelAfter(Timeout.InfiniteTimeSpan);
            }
            catch (ObjectDisposedException)
            {
                // The call ended while its last frame was still queued for the loop.
            }
        }
    }

    public bool TryEnqueue(PreSqEvent e) => _outbox.Writer.TryWrite(e);

    public void Complete()
    {
        _closed = true;
        _outbox.Writer.TryComplete();
    }

    /// <summary>Writes queued events until <see cref="Complete"/>; one flush per burst.</summary>
    public async Task PumpAsync(GrpcServerCall<SenderFrame, PreSqEvent> call, CancellationToken ct)
    {
        var reader = _outbox.Reader;
        while (await reader.WaitToReadAsync(ct).ConfigureAwait(false))
        {
            while (reader.TryRead(out var e))
            {
                await call.WriteAsync(e, flush: false, ct).ConfigureAwait(false);
            }
            await call.FlushAsync(ct).ConfigureAwait(false);
        }
    }

    public void Dispose() => _unboundTimer.Dispose();
}
