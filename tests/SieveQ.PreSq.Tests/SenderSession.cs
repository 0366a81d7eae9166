using System.Threading.Channels;
using Google.Protobuf;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Transport;
using SenderFrame = SieveQ.Protocol.V1.SenderFrame;

namespace SieveQ.PreSq.Tests;

/// <summary>A sender-SQ's Exchange stream to one pre-SQ over real HTTP/2: frames out, events in.</summary>
internal sealed class SenderSession : IAsyncDisposable
{
    private readonly GrpcChannel _channel;
    private readonly GrpcDuplexCall<SenderFrame, PreSqEvent> _call;
    private readonly Channel<PreSqEvent> _events = Channel.CreateUnbounded<PreSqEvent>();
    private readonly Task _reading;

    private SenderSession(GrpcChannel channel, GrpcDuplexCall<SenderFrame, PreSqEvent> call)
    {
        _channel = channel;
        _call = call;
        _reading = Task.Run(ReadAsync);
    }

    /// <summary>The status the call ended with, once it ended.</summary>
    public Exception? Ended { get; private set; }

    public static async Task<SenderSession> OpenAsync(Uri preSq, SieveQ.Transport.Tls.TlsPin? pin)
    {
        var channel = GrpcChannel.ForAddress(preSq, pin);
        var call = await channel.StartCallAsync<SenderFrame, PreSqEvent>(ProtocolNames.PreSqService, ProtocolNames.Exchange, PreSqEvent.Parser);
        return new SenderSession(channel, call);
    }

    public async Task SendAsync(params byte[][] frames)
    {
        foreach (var f in frames)
        {
            await _call.WriteAsync(new SenderFrame { Canonical = ByteString.CopyFrom(f) }, flush: false);
        }
        await _call.FlushAsync();
    }

    public async Task<PreSqEvent> NextEventAsync(TimeSpan timeout) => await _events.Reader.ReadAsync().AsTask().WaitAsync(timeout);

    private async Task ReadAsync()
    {
        try
        {
            await foreach (var e in _call.ReadAllAsync())
            {
                _events.Writer.TryWrite(e);
            }
        }
#pragma warning disable CA1031 // the test inspects how the call ended
        catch (Exception e)
#pragma warning restore CA1031
        {
            Ended = e;
        }
        _events.Writer.TryComplete();
    }

    public async ValueTask DisposeAsync()
    {
        await _call.CompleteRequestAsync();
        await _call.DisposeAsync();
        _channel.Dispose();
        await Task.WhenAny(_reading, Task.Delay(2000));
    }
}
