using Google.Protobuf;
using SieveQ.Deployment;
using SieveQ.Protocol;
using SieveQ.Transport;
using SieveQ.Transport.Tls;
using PreSqEvent = SieveQ.Protocol.V1.PreSqEvent;
using SenderFrame = SieveQ.Protocol.V1.SenderFrame;

namespace SieveQ.Attacks.Attacks;

/// <summary>
/// A flood of sender frames over real HTTP/2 Exchange streams, one per pre-SQ, paced at a fixed total rate in 1 ms
/// slots and spread round-robin over the pre-SQs; whatever the pre-SQ sends back is read and dropped. A stream the
/// pre-SQ ends (an unbound stream times out, a connection is refused) is opened again after a short pause, as a
/// persistent attacker would. Counts every frame written.
/// </summary>
internal sealed class PreSqFloodStreams(int ratePerSecond)
{
    private static readonly TimeSpan ReopenPause = TimeSpan.FromMilliseconds(200);
    private long _written;
    private long _reopened;

    public long Written => Interlocked.Read(ref _written);

    public long Reopened => Interlocked.Read(ref _reopened);

    /// <param name="frame">The next frame for the pre-SQ with that id.</param>
    public async Task RunAsync(DeploymentConfig config, Func<int, byte[]> frame, CancellationToken stop)
    {
        var preSqs = config.PreSqs.Select(p => (p.Id, Url: new Uri(p.Url), Pin: p.Pin())).ToList();
        var share = Math.Max(1, ratePerSecond / preSqs.Count);
        await Task.WhenAll(preSqs.Select(p => Task.Run(() => FloodOneAsync(p.Id, p.Url, p.Pin, share, frame, stop), CancellationToken.None))).ConfigureAwait(false);
    }

    private async Task FloodOneAsync(int preSq, Uri url, TlsPin? pin, int rate, Func<int, byte[]> frame, CancellationToken stop)
    {
        var pace = new AttackPace(rate);
        while (!stop.IsCancellationRequested)
        {
            using var channel = GrpcChannel.ForAddress(url, pin);
            GrpcDuplexCall<SenderFrame, PreSqEvent>? call = null;
            try
            {
                call = await channel.StartCallAsync<SenderFrame, PreSqEvent>(ProtocolNames.PreSqService, ProtocolNames.Exchange, PreSqEvent.Parser, stop).ConfigureAwait(false);
                var discarding = DiscardAsync(call, stop);
                while (!stop.IsCancellationRequested && !discarding.IsCompleted)
                {
                    var (_, count) = await pace.NextAsync(stop).ConfigureAwait(false);
                    for (var i = 0; i < count; i++)
                    {
                        await call.WriteAsync(new SenderFrame { Canonical = ByteString.CopyFrom(frame(preSq)) }, stop, flush: false).ConfigureAwait(false);
                        Interlocked.Increment(ref _written);
                    }
                    await call.FlushAsync(stop).ConfigureAwait(false);
                }
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                break;
            }
            catch (Exception e) when (e is IOException or HttpRequestException or GrpcCallException or OperationCanceledException or ObjectDisposedException)
            {
                // the pre-SQ ended the stream or refused the connection: open another
            }
            finally
            {
                if (call is not null)
                {
                    await call.DisposeAsync().ConfigureAwait(false);
                }
            }
            Interlocked.Increment(ref _reopened);
            try
            {
                await Task.Delay(ReopenPause, stop).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                break;
            }
        }
    }

    private static async Task DiscardAsync(GrpcDuplexCall<SenderFrame, PreSqEvent> call, CancellationToken stop)
    {
        try
        {
            await foreach (var _ in call.ReadAllAsync(stop).ConfigureAwait(false))
            {
                // an attacker has no use for ACKRES or WARNREQ
            }
        }
        catch (Exception e) when (e is IOException or HttpRequestException or GrpcCallException or OperationCanceledException or ObjectDisposedException)
        {
            // the stream ended; the writer notices and reopens
        }
    }
}
