using System.Buffers;
using System.Diagnostics;
using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using SieveQ.Bft.Codec;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Transport;

/// <summary>
/// One authenticated TCP connection to a known peer. Sending drains a <see cref="SendQueue"/> into the
/// socket pipe, coalescing whatever is queued into one flush; receiving checks each frame's sequence and MAC,
/// decodes it and hands it on only when its sender field names the authenticated peer.
/// Any malformed or unauthenticated frame ends the connection: a peer that sends one is broken or hostile.
/// </summary>
public sealed class AuthenticatedLink : IAsyncDisposable
{
    private const int FlushThresholdBytes = 256 * 1024;
    /// <summary>Messages are packed into one frame up to this size; a larger message travels alone.</summary>
    private const int CoalesceBytes = 64 * 1024;
    private readonly Socket _socket;
    private readonly NetworkStream _stream;
    private readonly PipeReader _reader;
    private readonly PipeWriter _writer;
    private readonly IncrementalHash _sendMac;
    private readonly IncrementalHash _receiveMac;
    private ulong _sendSequence;
    private ulong _receiveSequence;
    private int _disposed;

    private AuthenticatedLink(Socket socket, NetworkStream stream, LinkSecrets secrets)
    {
        _socket = socket;
        _stream = stream;
        PeerId = secrets.PeerId;
        _sendMac = IncrementalHash.CreateHMAC(HashAlgorithmName.SHA256, secrets.SendKey);
        _receiveMac = IncrementalHash.CreateHMAC(HashAlgorithmName.SHA256, secrets.ReceiveKey);
        _reader = PipeReader.Create(stream, new StreamPipeReaderOptions(bufferSize: 128 * 1024, minimumReadSize: 16 * 1024, leaveOpen: true));
        _writer = PipeWriter.Create(stream, new StreamPipeWriterOptions(minimumBufferSize: 64 * 1024, leaveOpen: true));
        TransportCounters.LinkOpened();
    }

    public int PeerId { get; }

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
    /// Sends everything <paramref name="queue"/> yields until cancelled or the connection fails. Messages
    /// queued together share one frame (up to <see cref="CoalesceBytes"/>), one MAC and one flush.
    /// </summary>
    public async Task RunSendPumpAsync(SendQueue queue, CancellationToken ct)
    {
        var batch = new List<OutboundPayload>(64);
        OutboundPayload? carried = null;
        while (carried is not null || await queue.WaitToReadAsync(ct).ConfigureAwait(false))
        {
            var start = Stopwatch.GetTimestamp();
            var frames = 0;
            long bytes = 0;
            while (true)
            {
                batch.Clear();
                var body = 0;
                if (carried is not null)
                {
                    batch.Add(carried);
                    body = FrameCodec.RecordHeaderBytes + carried.Length;
                    carried = null;
                }
                while (body < CoalesceBytes && queue.TryDequeue(out var next))
                {
                    var size = FrameCodec.RecordHeaderBytes + next.Length;
                    if (batch.Count > 0 && body + size > CoalesceBytes)
                    {
                        carried = next;  // starts the next frame
                        break;
                    }
                    batch.Add(next);
                    body += size;
                }
                if (batch.Count == 0)
                {
                    break;
                }
                var frameSize = FrameCodec.Overhead + body;
                var frame = _writer.GetSpan(frameSize)[..frameSize];
                var at = FrameCodec.BodyOf(frame);
                foreach (var p in batch)
                {
                    at = at[FrameCodec.WriteRecord(at, p.Span)..];
                    p.Release();
                }
                FrameCodec.SealInPlace(frame, _sendSequence++, _sendMac);
                _writer.Advance(frameSize);
                frames++;
                bytes += frameSize;
                if (_writer.UnflushedBytes >= FlushThresholdBytes)
                {
                    break;
                }
            }
            StageTimings.Add(Stage.SendSeal, start, frames);
            await FlushAsync(ct).ConfigureAwait(false);
            TransportCounters.FramesOut(frames, bytes);
        }
    }

    private async ValueTask FlushAsync(CancellationToken ct)
    {
        var start = Stopwatch.GetTimestamp();
        var result = await _writer.FlushAsync(ct).ConfigureAwait(false);
        StageTimings.Add(Stage.SendFlush, start);
        if (result.IsCompleted || result.IsCanceled)
        {
            throw new IOException("link closed while sending");
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

    private void Open(ReadOnlySequence<byte> frame, List<(BftMessage, int)> messages)
    {
        var start = Stopwatch.GetTimestamp();
        var length = (int)frame.Length;
        byte[]? rented = null;
        try
        {
            ReadOnlySpan<byte> span;
            if (frame.IsSingleSegment)
            {
                span = frame.FirstSpan;
            }
            else
            {
                rented = ArrayPool<byte>.Shared.Rent(length);
                frame.CopyTo(rented);
                span = rented.AsSpan(0, length);
            }
            if (!FrameCodec.TryOpen(span, _receiveSequence, _receiveMac, out var range))
            {
                TransportCounters.Drop(DropReason.BadMac);
                throw new LinkAuthenticationException($"frame {_receiveSequence} from node {PeerId} failed authentication");
            }
            _receiveSequence++;
            TransportCounters.FrameIn(length);
            var body = span[range];
            while (FrameCodec.TryNextRecord(ref body, out var record))
            {
                messages.Add((MessageCodec.Decode(record), record.Length));
            }
            StageTimings.Add(Stage.ReceiveDecode, start, messages.Count);
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
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
        FrameCodec.Seal(frame, _sendSequence++, payload, _sendMac);
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
        await _reader.CompleteAsync().ConfigureAwait(false);
        await _writer.CompleteAsync().ConfigureAwait(false);
        await _stream.DisposeAsync().ConfigureAwait(false);
        _sendMac.Dispose();
        _receiveMac.Dispose();
    }
}
