using System.Diagnostics;
using System.Threading.Channels;
using Google.Protobuf;
using Microsoft.Extensions.Logging;
using SieveQ.Transport.Tls;
using SieveQ.Protocol;
using SieveQ.Sdk.Internal;
using SieveQ.Protocol.V1;
using SieveQ.Transport;
using SieveQ.Transport.Reconnect;

namespace SieveQ.Sdk.Sender;

/// <summary>
/// The sender-SQ's stream to one pre-SQ (PreSq.Exchange): frames out, the ACKRES the pre-SQ relays
/// in. Opened on the first frame, reopened with back-off when it breaks. Frames queued while the
/// stream is down are discarded rather than sent late: the sender-SQ retransmits every unacknowledged
/// message on its own timer (through another pre-SQ), and a burst of stale frames would only look like
/// replays to the pre-SQ.
/// </summary>
internal sealed class PreSqLink : IAsyncDisposable
{
    private readonly GrpcChannel _channel;
    private readonly Channel<byte[]> _frames;
    private readonly Action<byte[]> _onAckResponse;
    private readonly ReconnectBackoff _backoff;
    private readonly ILogger _log;
    private readonly CancellationTokenSource _stop = new();
    private readonly Lock _startLock = new();
    private Task? _run;
    private long _sent;
    private long _dropped;
    private long _reconnects;

    public PreSqLink(int preSq, Uri url, TlsPin? pin, SieveQSenderOptions options, Action<byte[]> onAckResponse, ILogger log)
    {
        PreSq = preSq;
        _channel = GrpcChannel.ForAddress(url, pin);
        _onAckResponse = onAckResponse;
        _log = log;
        _backoff = new ReconnectBackoff(options.ReconnectDelay, options.MaxReconnectDelay, BackoffJitter.Around(0.25));
        _frames = Channel.CreateBounded<byte[]>(
            new BoundedChannelOptions(options.LinkQueueCapacity) { SingleReader = true, FullMode = BoundedChannelFullMode.DropOldest },
            _ => Interlocked.Increment(ref _dropped));
    }

    public int PreSq { get; }
    public long FramesSent => Interlocked.Read(ref _sent);
    public long FramesDropped => Interlocked.Read(ref _dropped);
    public long Reconnects => Interlocked.Read(ref _reconnects);

    /// <summary>Queues one frame; never blocks the sender's pump.</summary>
    public void Send(byte[] frame)
    {
        if (_run is null)
        {
            lock (_startLock)
            {
                _run ??= Task.Run(() => RunAsync(_stop.Token));
            }
        }
        _frames.Writer.TryWrite(frame);
    }

    private async Task RunAsync(CancellationToken stop)
    {
        // The link outlives the call that started it (an agent's request, whose activity is not sampled): its spans are roots.
        Activity.Current = null;
        while (!stop.IsCancellationRequested)
        {
            try
            {
                if (!await _frames.Reader.WaitToReadAsync(stop).ConfigureAwait(false))
                {
                    return;
                }
                await ExchangeAsync(stop).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                return;
            }
#pragma warning disable CA1031 // any failure of one stream (refused, reset, protocol error) means: reconnect later
            catch (Exception e)
#pragma warning restore CA1031
            {
                _log.LogDebug("pre-SQ {PreSq}: stream ended: {Reason}", PreSq, e.Message);
            }
            while (_frames.Reader.TryRead(out _))
            {
                Interlocked.Increment(ref _dropped);
            }
            Interlocked.Increment(ref _reconnects);
            if (!await _backoff.WaitAsync(stop).ConfigureAwait(false))
            {
                return;
            }
        }
    }

    private async Task ExchangeAsync(CancellationToken stop)
    {
        // One token ends everything of this call, including a response that never started.
        using var callEnded = CancellationTokenSource.CreateLinkedTokenSource(stop);
        var call = await _channel.StartCallAsync<SenderFrame, PreSqEvent>(ProtocolNames.PreSqService, ProtocolNames.Exchange, PreSqEvent.Parser, callEnded.Token).ConfigureAwait(false);
        await using (call.ConfigureAwait(false))
        {
            var reader = ReadAsync(call, callEnded);
            try
            {
                var first = true;
                do
                {
                    using var span = SdkTracing.Source.StartActivity("sender send batch", ActivityKind.Producer);
                    var frames = 0;
                    while (_frames.Reader.TryRead(out var frame))
                    {
                        await call.WriteAsync(new SenderFrame { Canonical = UnsafeByteOperations.UnsafeWrap(frame) }, callEnded.Token, flush: false).ConfigureAwait(false);
                        Interlocked.Increment(ref _sent);
                        frames++;
                    }
                    await call.FlushAsync(callEnded.Token).ConfigureAwait(false);
                    span?.SetTag("sieveq.pre_sq", PreSq);
                    span?.SetTag("sieveq.frames", frames);
                    if (first)
                    {
                        _backoff.Reset();
                        first = false;
                    }
                }
                while (await _frames.Reader.WaitToReadAsync(callEnded.Token).ConfigureAwait(false));
            }
            finally
            {
                await call.CompleteRequestAsync().ConfigureAwait(false);
                await callEnded.CancelAsync().ConfigureAwait(false);
                await reader.ConfigureAwait(false);
            }
        }
    }

    /// <summary>Relays every ACKRES until the pre-SQ ends the stream, then stops the writer too.</summary>
    private async Task ReadAsync(GrpcDuplexCall<SenderFrame, PreSqEvent> call, CancellationTokenSource callEnded)
    {
        try
        {
            await foreach (var e in call.ReadAllAsync(callEnded.Token).ConfigureAwait(false))
            {
                if (e.EventCase == PreSqEvent.EventOneofCase.AckResponse)
                {
                    _onAckResponse(e.AckResponse.ToByteArray());
                }
            }
        }
        catch (OperationCanceledException)
        {
            // the writer ended the call
        }
#pragma warning disable CA1031 // a broken response stream is a reason to reconnect, reported by the writer
        catch (Exception e)
#pragma warning restore CA1031
        {
            _log.LogDebug("pre-SQ {PreSq}: response stream failed: {Reason}", PreSq, e.Message);
        }
        finally
        {
            await callEnded.CancelAsync().ConfigureAwait(false);
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        _frames.Writer.TryComplete();
        if (_run is not null)
        {
            await _run.ConfigureAwait(false);
        }
        _channel.Dispose();
        _stop.Dispose();
    }
}
