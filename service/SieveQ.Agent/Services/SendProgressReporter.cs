using System.Threading.Channels;
using SieveQ.Protocol.V1;
using SieveQ.Sdk.Internal;
using SieveQ.Sdk.Sender;
using SieveQ.Transport;

namespace SieveQ.Agent.Services;

/// <summary>
/// Streams SendProgress to one application stream: at once after messages are accepted (coalesced,
/// so a burst costs one write) and whenever the acknowledged prefix moves, which the application
/// uses to know what is safe.
/// </summary>
internal sealed class SendProgressReporter
{
    private static readonly TimeSpan AckPoll = TimeSpan.FromMilliseconds(20);
    private readonly GrpcServerCall<AppSend, SendProgress> _call;
    private readonly SieveQSender _sender;
    private readonly Channel<bool> _changed = Channel.CreateBounded<bool>(new BoundedChannelOptions(1) { FullMode = BoundedChannelFullMode.DropWrite, SingleReader = true });
    private long _accepted;
    private long _lastSeq;

    public SendProgressReporter(GrpcServerCall<AppSend, SendProgress> call, SieveQSender sender)
    {
        _call = call;
        _sender = sender;
    }

    public void Accepted(long seq)
    {
        Interlocked.Increment(ref _accepted);
        Interlocked.Exchange(ref _lastSeq, seq);
        _changed.Writer.TryWrite(true);
    }

    /// <summary>Reports until <paramref name="inputDone"/> completes and everything accepted is acknowledged, or the call ends.</summary>
    public async Task RunAsync(Task inputDone, CancellationToken ct)
    {
        var waiter = new ChannelWaiter<bool>(_changed.Reader);
        var reported = (Accepted: -1L, Acknowledged: -1L);
        while (!ct.IsCancellationRequested)
        {
            while (_changed.Reader.TryRead(out _))
            {
            }
            var now = (Accepted: Interlocked.Read(ref _accepted), Acknowledged: _sender.AcknowledgedUpTo);
            var lastSeq = Interlocked.Read(ref _lastSeq);
            if (now != reported)
            {
                await _call.WriteAsync(new SendProgress { Accepted = now.Accepted, LastSeq = lastSeq, Acknowledged = now.Acknowledged }, ct: ct).ConfigureAwait(false);
                reported = now;
            }
            if (inputDone.IsCompleted && now.Acknowledged >= lastSeq)
            {
                return;
            }
            await PumpWait.AnyAsync([waiter.Readable(ct), inputDone], (long)AckPoll.TotalMilliseconds, ct).ConfigureAwait(false);
        }
    }
}
