using System.Buffers;
using System.Diagnostics;
using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using SieveQ.Bft.Codec;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Transport;

/// <summary>
/// One authenticated TCP connection to a known peer. Sending drains a <see cref="SendQueue"/> into the
/// socket pipe, coalescing whatever is queued into one flush and encrypting each frame (AES-256-GCM) in
/// place in the pipe's buffer; receiving checks each frame's sequence, decrypts and authenticates it, decodes it and hands it on only when its sender field names the authenticated peer.
/// Any malformed or unauthenticated frame ends the connection: a peer that sends one is broken or hostile.
/// </summary>
public sealed class AuthenticatedLink : IAsyncDisposable, ISendDrain
{
    private const int FlushThresholdBytes = 256 * 1024;
    /// <summary>Backlogs up to this size are sent on the kicking thread (see <see cref="Kick"/>).</summary>
    private const long InlineSendBytes = 32 * 1024;
    /// <summary>Messages are packed into one frame up to this size; a larger message travels alone.</summary>
    private const int CoalesceBytes = 64 * 1024;
    private readonly Socket _socket;
    private readonly NetworkStream _stream;
    private readonly PipeReader _reader;
    private readonly PipeWriter _writer;
    private readonly FrameCipher _sendCipher;
    private readonly FrameCipher _receiveCipher;
    private readonly TaskCompletionSource _sendEnded = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly List<OutboundPayload> _sealBatch = new(64);
    private SendQueue? _queue;
    private CancellationToken _sendCancel;
    private OutboundPayload? _carried;
    /// <summary>Held by the thread writing to the pipe; closed when the writer is dead for good.</summary>
    private readonly TurnFlag _sendTurn = new();
    private ulong _sendSequence;
    private ulong _receiveSequence;
    private int _disposed;

    private AuthenticatedLink(Socket socket, NetworkStream stream, LinkSecrets secrets)
    {
        _socket = socket;
        _stream = stream;
        PeerId = secrets.PeerId;
        _sendCipher = new FrameCipher(secrets.Send);
        _receiveCipher = new FrameCipher(secrets.Receive);
        _reader = PipeReader.Create(stream, new StreamPipeReaderOptions(bufferSize: 128 * 1024, minimumReadSize: 16 * 1024, leaveOpen: true));
        _writer = PipeWriter.Create(stream, new StreamPipeWriterOptions(minimumBufferSize: 64 * 1024, leaveOpen: true));
        TransportCounters.LinkOpened();
    }

    public int PeerId { get; }

    /// <summary>Payloads a PROPOSE read from this link may share instead of copying (set before receiving starts).</summary>
    public KnownRequestPayloads? KnownRequests { get; set; }

    public static async Task<AuthenticatedLink> ConnectAsync(IPEndPoint endpoint, int self, int expectedPeer, IdentityKey identity, KeyRing ring, int handshakeTimeoutMs, CancellationToken ct)
    {
        var socket = new Socket(endpoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(ct);
            timeout.CancelAfter(handshakeTimeoutMs);
            await socket.ConnectAsync(endpoint, timeout.Token).ConfigureAwait(false);
            var stream = new NetworkStream(socket, ownsSocket: true);
            var secrets = await LinkHandshake.InitiateAsync(stream, self, expectedPeer, identity, ring, timeout.Token).ConfigureAwait(false);
            return new AuthenticatedLink(socket, stream, secrets);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>Runs the responder side of the handshake on an accepted socket.</summary>
    public static async Task<AuthenticatedLink> AcceptAsync(Socket socket, int self, IdentityKey identity, KeyRing ring, Func<int, bool> acceptPeer, int handshakeTimeoutMs, CancellationToken ct)
    {
        socket.NoDelay = true;
        var stream = new NetworkStream(socket, ownsSocket: true);
        try
        {
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(ct);
            timeout.CancelAfter(handshakeTimeoutMs);
            var secrets = await LinkHandshake.RespondAsync(stream, self, identity, ring, acceptPeer, timeout.Token).ConfigureAwait(false);
            return new AuthenticatedLink(socket, stream, secrets);
        }
        catch
        {
            await stream.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>
    /// Serves <paramref name="queue"/> until cancelled, the queue completes or the connection fails. Messages
    /// queued together share one frame (up to <see cref="CoalesceBytes"/>), one AEAD call and one flush.
    /// </summary>
    public async Task RunSendPumpAsync(SendQueue queue, CancellationToken ct)
    {
        _queue = queue;
        _sendCancel = ct;
        using var registration = ct.Register(static s => ((AuthenticatedLink)s!)._sendEnded.TrySetCanceled(), this);
        queue.Attach(this);
        try
        {
            Kick();  // what was queued while no link was up
            await _sendEnded.Task.ConfigureAwait(false);
        }
        finally
        {
            queue.Detach(this);
        }
    }

    /// <summary>
    /// Sends what is queued. A small backlog is sealed and written on the caller's thread: a loopback send
    /// is one system call, while handing it to a pool thread costs a wake-up and two context switches,
    /// which on a small, busy (virtualised) machine cost more than the send and add a scheduling delay to
    /// every protocol step. A large backlog (a big PROPOSE) goes to a pool thread, so its encryption and copy do
    /// not stall the producer, which is usually the core loop.
    /// </summary>
    public void Kick()
    {
        var queue = _queue;
        if (queue is null || !_sendTurn.TryTake())
        {
            return;  // not serving yet, or the thread that holds the writer will see the new messages
        }
        if (queue.Bytes > InlineSendBytes)
        {
            PumpOnPool();
            return;
        }
        Pump(inline: true);
    }

    private void PumpOnPool() => ThreadPool.UnsafeQueueUserWorkItem(static link => link.Pump(inline: false), this, preferLocal: false);

    public void QueueCompleted() => _sendEnded.TrySetResult();

    /// <summary>Runs while holding the writer (<see cref="_sendTurn"/>); releases it when the queue is empty.</summary>
    private void Pump(bool inline)
    {
        try
        {
            while (true)
            {
                var start = Stopwatch.GetTimestamp();
                var frames = SealQueued(out var bytes);
                if (frames == 0)
                {
                    // The release is a full fence, so the emptiness check cannot be read before it: a producer
                    // that queued and kicked meanwhile is not stranded.
                    _sendTurn.Release();
                    if (_queue!.IsEmpty || !_sendTurn.TryTake())
                    {
                        return;
                    }
                    continue;
                }
                StageTimings.Add(Stage.SendSeal, start, frames);
                var flushStart = Stopwatch.GetTimestamp();
                var flush = _writer.FlushAsync(_sendCancel);
                if (!flush.IsCompleted)
                {
                    _ = FinishFlushAsync(flush, frames, bytes, flushStart);
                    return;
                }
                if (!Flushed(flush.Result, frames, bytes, flushStart))
                {
                    return;
                }
                if (inline && !_queue!.IsEmpty)
                {
                    PumpOnPool();  // the producer sent its own messages; whatever others queued since goes to a pool thread
                    return;
                }
            }
        }
        catch (Exception e)
        {
            FailSend(e);
        }
    }

    private async Task FinishFlushAsync(ValueTask<FlushResult> flush, int frames, long bytes, long flushStart)
    {
        try
        {
            if (!Flushed(await flush.ConfigureAwait(false), frames, bytes, flushStart))
            {
                return;
            }
        }
        catch (Exception e)
        {
            FailSend(e);
            return;
        }
        Pump(inline: false);
    }

    private bool Flushed(FlushResult result, int frames, long bytes, long flushStart)
    {
        StageTimings.Add(Stage.SendFlush, flushStart);
        if (result.IsCompleted || result.IsCanceled)
        {
            FailSend(new IOException("link closed while sending"));
            return false;
        }
        TransportCounters.FramesOut(frames, bytes);
        return true;
    }

    /// <summary>The writer is dead for good: the session ends and nothing writes to this link again.</summary>
    private void FailSend(Exception e)
    {
        _sendTurn.Close();
        if (e is OperationCanceledException && _sendCancel.IsCancellationRequested)
        {
            _sendEnded.TrySetCanceled(_sendCancel);
        }
        else
        {
            _sendEnded.TrySetException(e);
        }
    }

    /// <summary>Seals queued messages into frames in the pipe, up to <see cref="FlushThresholdBytes"/>; returns the frame count.</summary>
    private int SealQueued(out long bytes)
    {
        var queue = _queue!;
        var batch = _sealBatch;
        var frames = 0;
        bytes = 0;
        while (true)
        {
            if (_sendCipher.Exhausted)
            {
                // Checked before anything is dequeued, so no message is lost: what is queued goes out on the
                // redialled link under fresh keys.
                if (frames > 0)
                {
                    return frames;
                }
                throw new IOException($"link key to node {PeerId} has sealed its byte budget; redialling for fresh keys");
            }
            batch.Clear();
            var body = 0;
            if (_carried is not null)
            {
                batch.Add(_carried);
                body = FrameCodec.RecordHeaderBytes + _carried.Length;
                _carried = null;
            }
            while (body < CoalesceBytes && queue.TryDequeue(out var next))
            {
                var size = FrameCodec.RecordHeaderBytes + next.Length;
                if (batch.Count > 0 && body + size > CoalesceBytes)
                {
                    _carried = next;  // starts the next frame
                    break;
                }
                batch.Add(next);
                body += size;
            }
            if (batch.Count == 0)
            {
                return frames;
            }
            var frameSize = FrameCodec.Overhead + body;
            var frame = _writer.GetSpan(frameSize)[..frameSize];
            var at = FrameCodec.BodyOf(frame);
            foreach (var p in batch)
            {
                at = at[FrameCodec.WriteRecord(at, p.Span)..];
                p.Release();
            }
            FrameCodec.SealInPlace(frame, _sendSequence++, _sendCipher);
            _writer.Advance(frameSize);
            frames++;
            bytes += frameSize;
            if (_writer.UnflushedBytes >= FlushThresholdBytes)
            {
                return frames;
            }
        }
    }

    /// <summary>
    /// Reads frames until the peer closes, a frame fails authentication (throws) or <paramref name="ct"/> fires.
    /// A message that names another sender than the authenticated peer is dropped and counted.
    /// </summary>
    public async Task RunReceiveAsync(Func<BftMessage, int, ValueTask> onMessage, CancellationToken ct)
    {
        var messages = new List<(BftMessage Message, int Bytes)>(64);
        while (true)
        {
            var result = await _reader.ReadAsync(ct).ConfigureAwait(false);
            var buffer = result.Buffer;
            try
            {
                while (FrameCodec.TryReadFrame(ref buffer, out var frame))
                {
                    messages.Clear();
                    Open(frame, messages);
                    foreach (var (message, bytes) in messages)
                    {
                        if (message.From != PeerId)
                        {
                            TransportCounters.Drop(DropReason.FromMismatch);
                            continue;
                        }
                        await onMessage(message, bytes).ConfigureAwait(false);
                    }
                }
            }
            catch (MalformedMessageException)
            {
                TransportCounters.Drop(DropReason.MalformedFrame);
                throw;
            }
            _reader.AdvanceTo(buffer.Start, buffer.End);
            if (result.IsCompleted || result.IsCanceled)
            {
                return;
            }
        }
    }

    /// <summary>
    /// Decrypts one frame into a pooled buffer and decodes its messages. A frame in one segment is decrypted
    /// straight out of the pipe; one split across segments is first gathered, then decrypted in place.
    /// </summary>
    private void Open(ReadOnlySequence<byte> frame, List<(BftMessage, int)> messages)
    {
        var start = Stopwatch.GetTimestamp();
        var length = (int)frame.Length;
        var rented = ArrayPool<byte>.Shared.Rent(length);
        try
        {
            ReadOnlySpan<byte> span;
            Span<byte> body;
            if (frame.IsSingleSegment)
            {
                span = frame.FirstSpan;
                body = rented.AsSpan(0, FrameCodec.BodyLength(length));
            }
            else
            {
                frame.CopyTo(rented);
                span = rented.AsSpan(0, length);
                body = FrameCodec.BodyOf(rented.AsSpan(0, length));
            }
            if (!FrameCodec.TryOpen(span, _receiveSequence, _receiveCipher, body))
            {
                TransportCounters.Drop(DropReason.BadMac);
                throw new LinkAuthenticationException($"frame {_receiveSequence} from node {PeerId} failed authentication");
            }
            _receiveSequence++;
            TransportCounters.FrameIn(length);
            ReadOnlySpan<byte> records = body;
            while (FrameCodec.TryNextRecord(ref records, out var record))
            {
                messages.Add((MessageCodec.Decode(record, KnownRequests), record.Length));
            }
            StageTimings.Add(Stage.ReceiveDecode, start, messages.Count);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <summary>Writes a raw, already sealed byte sequence; for tests that tamper with or replay frames.</summary>
    internal async Task SendRawForTestAsync(ReadOnlyMemory<byte> bytes, CancellationToken ct)
    {
        await _stream.WriteAsync(bytes, ct).ConfigureAwait(false);
    }

    /// <summary>Seals a payload with the next send sequence without sending it; for tests.</summary>
    internal byte[] SealForTest(ReadOnlySpan<byte> payload)
    {
        var frame = new byte[FrameCodec.SingleMessageFrameSize(payload.Length)];
        FrameCodec.Seal(frame, _sendSequence++, payload, _sendCipher);
        return frame;
    }

    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }
        try
        {
            _socket.Shutdown(SocketShutdown.Both);
        }
        catch (SocketException)
        {
            // already reset by the peer; nothing to shut down
        }
        catch (ObjectDisposedException)
        {
            // closed concurrently by a failing pump
        }
        // Take the writer from whichever thread holds it, so completing the pipe never races a send. With the
        // socket shut down a pending flush fails at once; the bounded wait covers an inline send in progress.
        if (await _sendTurn.CloseWhenFreeAsync(200).ConfigureAwait(false))
        {
            _carried?.Release();
            _carried = null;
        }
        await _reader.CompleteAsync().ConfigureAwait(false);
        try
        {
            await _writer.CompleteAsync().ConfigureAwait(false);
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException)
        {
            // Completing writes out frames sealed but not yet flushed; on a closed socket they are lost anyway.
        }
        await _stream.DisposeAsync().ConfigureAwait(false);
        _sendCipher.Dispose();
        _receiveCipher.Dispose();
    }
}
