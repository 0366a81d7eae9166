using System.Threading.Channels;
using Google.Protobuf;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.ReplicaSq;

/// <summary>
/// One receiver's live subscription: a queue of rendered frames bounded in count and bytes, written to
/// the gRPC stream by the subscription's own handler. Producers never wait: a frame that does not fit
/// means the subscriber is too slow, and the caller ends the subscription instead (the receiver
/// resubscribes and gets everything unacknowledged again, so ending it loses nothing).
/// </summary>
internal sealed class ReceiverStream : IDisposable
{
    private const int FlushEveryBytes = 256 * 1024;

    private readonly Channel<byte[]> _frames;
    private readonly int _maxFrames;
    private readonly long _maxBytes;
    private readonly CancellationTokenSource _ended = new();
    private long _queuedBytes;
    private long _lastResendMs;
    private int _endReason;

    public ReceiverStream(int receiver, int maxFrames, long maxBytes)
    {
        Receiver = receiver;
        _maxFrames = maxFrames;
        _maxBytes = maxBytes;
        _frames = Channel.CreateBounded<byte[]>(new BoundedChannelOptions(maxFrames)
        {
            FullMode = BoundedChannelFullMode.Wait,
            SingleReader = true,
            SingleWriter = false,
        });
    }

    public int Receiver { get; }

    /// <summary>Cancelled when the subscription is replaced or dropped as too slow.</summary>
    public CancellationToken Ended => _ended.Token;

    public StreamEnd EndReason => (StreamEnd)Volatile.Read(ref _endReason);

    /// <summary>When pending items were last re-sent on this stream (ms, monotonic clock of the caller).</summary>
    public long LastResendMs
    {
        get => Interlocked.Read(ref _lastResendMs);
        set => Interlocked.Exchange(ref _lastResendMs, value);
    }

    /// <summary>Retransmissions only go into a queue at most half full, so they never crowd out live batches.</summary>
    public bool HasRoomForResend => _frames.Reader.Count < _maxFrames / 2 && Interlocked.Read(ref _queuedBytes) < _maxBytes / 2;

    public bool TryEnqueue(byte[] frame)
    {
        if (Interlocked.Add(ref _queuedBytes, frame.Length) > _maxBytes || !_frames.Writer.TryWrite(frame))
        {
            Interlocked.Add(ref _queuedBytes, -frame.Length);
            return false;
        }
        return true;
    }

    public void End(StreamEnd reason)
    {
        if (Interlocked.CompareExchange(ref _endReason, (int)reason, (int)StreamEnd.Open) != (int)StreamEnd.Open)
        {
            return;
        }
        _frames.Writer.TryComplete();
        try
        {
            _ended.Cancel();
        }
        catch (ObjectDisposedException)
        {
            // the handler already finished
        }
    }

    /// <summary>Writes queued frames until the stream ends; flushes when the queue runs dry or enough bytes are buffered.</summary>
    public async Task WriteToAsync(GrpcServerCall<ReceiverSubscription, ReplicaOutputFrame> call, CancellationToken ct)
    {
        var reader = _frames.Reader;
        while (await reader.WaitToReadAsync(ct).ConfigureAwait(false))
        {
            var unflushed = 0;
            while (reader.TryRead(out var frame))
            {
                Interlocked.Add(ref _queuedBytes, -frame.Length);
                unflushed += frame.Length;
                var flush = unflushed >= FlushEveryBytes || reader.Count == 0;
                await call.WriteAsync(new ReplicaOutputFrame { Canonical = UnsafeByteOperations.UnsafeWrap(frame) }, flush, ct).ConfigureAwait(false);
                if (flush)
                {
                    unflushed = 0;
                }
            }
            if (unflushed > 0)
            {
                await call.FlushAsync(ct).ConfigureAwait(false);
            }
        }
    }

    public void Dispose() => _ended.Dispose();
}

internal enum StreamEnd
{
    Open,
    Replaced,
    TooSlow,
    ClientGone,
    Shutdown,
}
