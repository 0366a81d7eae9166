using Google.Protobuf;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Deployment;
using SieveQ.Protocol;
using SieveQ.Transport;
using SenderFrame = SieveQ.Protocol.V1.SenderFrame;
using PreSqEvent = SieveQ.Protocol.V1.PreSqEvent;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// An enrolled sender whose host was taken over: it holds the sender's real keys and speaks the real
/// protocol, but numbers, repeats and paces its messages as it likes, straight over HTTP/2 to a pre-SQ.
/// </summary>
internal sealed class CompromisedSender : IAsyncDisposable
{
    private readonly PartyKeys _keys;
    private readonly List<(GrpcChannel Channel, GrpcDuplexCall<SenderFrame, PreSqEvent> Call)> _streams = [];

    public CompromisedSender(DeploymentContext deployment, int sender)
    {
        _keys = deployment.Keys(PartyRole.Sender, sender);
        Id = sender;
        Deployment = deployment;
    }

    public int Id { get; }
    public DeploymentContext Deployment { get; }

    /// <summary>A correctly signed message with the test traffic's payload for index <c>seq - 1</c>.</summary>
    public byte[] Message(long seq) =>
        SenderMessageCodec.SignSingle(SenderMessageCodec.EncodeSignedRegion(Id, seq, SieveDeployment.ReceiverId, Traffic.Payload(Id, (int)(seq - 1))), _keys.Signing!);

    /// <summary>Frames <paramref name="message"/> with the MAC this sender shares with <paramref name="preSq"/>: the pre-SQ's own checks pass it.</summary>
    public byte[] Frame(int preSq, byte[] message) => SenderFrameCodec.Encode(preSq, message, _keys.Ring(MacChannel.SenderPreSq, preSq)!);

    public async Task SendAsync(int preSq, IEnumerable<byte[]> messages)
    {
        var call = await StreamAsync(preSq);
        foreach (var m in messages)
        {
            await call.WriteAsync(new SenderFrame { Canonical = ByteString.CopyFrom(Frame(preSq, m)) }, flush: false);
        }
        await call.FlushAsync();
    }

    private async Task<GrpcDuplexCall<SenderFrame, PreSqEvent>> StreamAsync(int preSq)
    {
        var entry = Deployment.Config.PreSqs.Single(p => p.Id == preSq);
        var url = new Uri(entry.Url);
        var channel = GrpcChannel.ForAddress(url, entry.Pin());
        var call = await channel.StartCallAsync<SenderFrame, PreSqEvent>(ProtocolNames.PreSqService, ProtocolNames.Exchange, PreSqEvent.Parser);
        _streams.Add((channel, call));
        return call;
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var (channel, call) in _streams)
        {
            try
            {
                await call.CompleteRequestAsync();
            }
            catch (Exception e) when (e is IOException or HttpRequestException or GrpcCallException or OperationCanceledException or ObjectDisposedException)
            {
                // the pre-SQ may have ended the stream already
            }
            await call.DisposeAsync();
            channel.Dispose();
        }
        _keys.Dispose();
    }
}
