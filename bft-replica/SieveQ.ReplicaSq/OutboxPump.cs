using Microsoft.Extensions.Logging;
using SieveQ.Sieve.Diagnostics;
using SieveQ.Sieve.Hosting.Diagnostics;
using SieveQ.Sieve.Replica;

namespace SieveQ.ReplicaSq;

/// <summary>
/// The one reader of the <see cref="ExecutionOutputQueue"/>: renders and routes each execution's outputs off the core
/// thread (batches to receiver subscriptions, ACKRES to pre-SQ relays, notices to the log), in the
/// order they were executed. Also runs the periodic retransmission tick.
/// </summary>
internal sealed partial class OutboxPump
{
    private readonly ExecutionOutputQueue _outputs;
    private readonly ReceiverStreams _receivers;
    private readonly PreSqAckResponseQueues _acks;
    private readonly ControllerNotices _notices;
    private readonly TimeSpan _tick;
    private readonly ILogger _log;

    public OutboxPump(ExecutionOutputQueue outputs, ReceiverStreams receivers, PreSqAckResponseQueues acks, ControllerNotices notices, TimeSpan tick, ILogger log)
    {
        _outputs = outputs;
        _receivers = receivers;
        _acks = acks;
        _notices = notices;
        _tick = tick;
        _log = log;
    }

    /// <summary>Executions' outputs waiting for the pump.</summary>
    public int Backlog => _outputs.Reader.CanCount ? _outputs.Reader.Count : 0;

    /// <summary>Runs until the output queue is completed and emptied.</summary>
    public async Task RunAsync()
    {
        await foreach (var contents in _outputs.Reader.ReadAllAsync().ConfigureAwait(false))
        {
            try
            {
                foreach (var b in contents.Batches)
                {
                    if (StageTrace.Enabled)
                    {
                        foreach (var item in b.Items)
                        {
                            StageTrace.Mark(StageNames.ReplicaPublished, item.Sender, item.SenderSeq);
                        }
                    }
                    _receivers.Publish(b);
                }
                foreach (var a in contents.AckResponses)
                {
                    _acks.Publish(a);
                }
                foreach (var n in contents.Notices)
                {
                    _notices.Report(n);
                }
            }
#pragma warning disable CA1031 // one bad output must not stop every later one; items stay queued and are re-sent
            catch (Exception e)
#pragma warning restore CA1031
            {
                LogFailed(e);
            }
        }
    }

    public async Task RetransmitLoopAsync(CancellationToken ct)
    {
        using var timer = new PeriodicTimer(_tick);
        try
        {
            while (await timer.WaitForNextTickAsync(ct).ConfigureAwait(false))
            {
                try
                {
                    _receivers.RetransmitDue();
                }
#pragma warning disable CA1031 // the next tick tries again
                catch (Exception e)
#pragma warning restore CA1031
                {
                    LogFailed(e);
                }
            }
        }
        catch (OperationCanceledException)
        {
            // stopping
        }
    }

    [LoggerMessage(Level = LogLevel.Error, Message = "routing replica outputs failed")]
    private partial void LogFailed(Exception e);
}
