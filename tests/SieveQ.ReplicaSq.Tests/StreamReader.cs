using System.Threading.Channels;
using Google.Protobuf;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.ReplicaSq.Tests;

/// <summary>
/// A test client's end of one server stream (Subscribe or AckResponses) over real gRPC: it sends the
/// subscription, then copies every message into <see cref="Messages"/> until the stream ends.
/// </summary>
internal sealed class StreamReader<TRequest, TResponse> : IAsyncDisposable
    where TRequest : class, IMessage<TRequest>
    where TResponse : class, IMessage<TResponse>
{
    private readonly GrpcChannel _channel;
    private readonly CancellationTokenSource _stop = new();

    private StreamReader(GrpcChannel channel, int replica)
    {
        _channel = channel;
        Replica = replica;
    }

    public int Replica { get; }
    public Channel<(int Replica, TResponse Message)> Messages { get; private init; } = null!;
    /// <summary>Completes when the stream ends; faulted with the call's error.</summary>
    public Task Reading { get; private set; } = Task.CompletedTask;

    public static async Task<StreamReader<TRequest, TResponse>> OpenAsync(Uri url, SieveQ.Transport.Tls.TlsPin? pin, int replica, string method, TRequest subscription, MessageParser<TResponse> parser,
        Channel<(int, TResponse)>? into = null)
    {
        var reader = new StreamReader<TRequest, TResponse>(GrpcChannel.ForAddress(url, pin), replica) { Messages = into ?? Channel.CreateUnbounded<(int, TResponse)>() };
        var call = await reader._channel.StartCallAsync<TRequest, TResponse>(ProtocolNames.ReplicaSqService, method, parser, reader._stop.Token);
        await call.WriteAsync(subscription, reader._stop.Token);
        await call.CompleteRequestAsync();
        reader.Reading = Task.Run(async () =>
        {
            await using (call)
            {
                await foreach (var m in call.ReadAllAsync(reader._stop.Token))
                {
                    await reader.Messages.Writer.WriteAsync((replica, m));
                }
            }
        });
        return reader;
    }

    /// <summary>Opens a stream that the replica must refuse; returns the status it ended with.</summary>
    public static async Task<GrpcStatusCode> RefusalAsync(Uri url, SieveQ.Transport.Tls.TlsPin? pin, string method, TRequest subscription, MessageParser<TResponse> parser)
    {
        var reader = await OpenAsync(url, pin, -1, method, subscription, parser);
        await using (reader)
        {
            var e = await Assert.ThrowsAsync<GrpcCallException>(() => reader.Reading.WaitAsync(TimeSpan.FromSeconds(10)));
            return e.Status;
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        try
        {
            await Reading;
        }
        catch (Exception e) when (e is OperationCanceledException or GrpcCallException or IOException or HttpRequestException)
        {
            // the stream was ended by us or by the replica
        }
        _channel.Dispose();
        _stop.Dispose();
    }
}
