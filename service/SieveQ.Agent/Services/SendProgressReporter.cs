using System.Threading.Channels;
using SieveQ.Protocol.V1;
using SieveQ.Sdk.Internal;
using SieveQ.Sdk.Sender;
using SieveQ.Transport;

namespace SieveQ.Agent.Services;

/// <summary>
/// Streams SendProgress to one application stream: at once after messages are accepted or end (coalesced, so a
/// burst costs one write) and whenever the acknowledged prefix moves, which the application uses to know what is
/// safe. Messages that were not delivered are listed with how they ended, so that an application on the agent
/// learns a refusal or a rule's denial as an SDK application does.
/// </summary>
internal sealed class SendProgressReporter
{
    /// <summary>Outcomes kept for one stream until written; beyond, they are only counted (an application that never reads).</summary>
    public const int MaxListed = 4096;

    /// <summary>Outcomes in one progress message, to keep it small whatever piled up.</summary>
    public const int MaxPerProgress = 256;

    private static readonly TimeSpan AckPoll = TimeSpan.FromMilliseconds(20);
    private readonly Func<SendProgress, CancellationToken, Task> _write;
    private readonly Func<long> _acknowledgedUpTo;
    private readonly Channel<bool> _changed = Channel.CreateBounded<bool>(new BoundedChannelOptions(1) { FullMode = BoundedChannelFullMode.DropWrite, SingleReader = true });
    private readonly Lock _lock = new();
    private readonly Queue<SendOutcome> _outcomes = new();
    private long _accepted;
    private long _lastSeq;
    private long _delivered;
    private long _refused;
    private long _notListed;
    private long _unsettled;

    public SendProgressReporter(GrpcServerCall<AppSend, SendProgress> call, SieveQSender sender)
        : this((p, ct) => call.WriteAsync(p, ct: ct).AsTask(), () => sender.AcknowledgedUpTo)
    {
    }

    /// <summary>For a test: where progress goes and what the sender has had acknowledged.</summary>
    internal SendProgressReporter(Func<SendProgress, CancellationToken, Task> write, Func<long> acknowledgedUpTo)
    {
        _write = write;
        _acknowledgedUpTo = acknowledgedUpTo;
    }

    /// <summary>A message was numbered and queued; its outcome follows through <see cref="Ended"/>.</summary>
    public void Accepted(long seq)
    {
        lock (_lock)
        {
            _accepted++;
            _unsettled++;
            _lastSeq = seq;
        }
        _changed.Writer.TryWrite(true);
    }

    /// <summary>How message <paramref name="index"/> of the stream ended.</summary>
    public void Ended(long index, MessageOutcome outcome)
    {
        ArgumentNullException.ThrowIfNull(outcome);
        lock (_lock)
        {
            _unsettled--;
            if (outcome.Kind == MessageOutcomeKind.Delivered)
            {
                _delivered++;
            }
            else
            {
                List(new SendOutcome
                {
                    Index = index,
                    Seq = outcome.Seq,
                    Receiver = outcome.Receiver,
                    Kind = outcome.Kind switch
                    {
                        MessageOutcomeKind.Rejected => SendOutcomeKind.Rejected,
                        MessageOutcomeKind.TimedOut => SendOutcomeKind.TimedOut,
                        _ => SendOutcomeKind.VerdictUnknown,
                    },
                    Reason = outcome.Reason?.ToString() ?? "",
                    Detail = outcome.Rule ?? "",
                });
            }
        }
        _changed.Writer.TryWrite(true);
    }

    /// <summary>The sender stopped before message <paramref name="index"/> had an outcome (the agent is stopping).</summary>
    public void Abandoned()
    {
        lock (_lock)
        {
            _unsettled--;
        }
        _changed.Writer.TryWrite(true);
    }

    /// <summary>Message <paramref name="index"/> was refused before numbering; the stream goes on.</summary>
    public void Refused(long index, SendRefusedException refusal)
    {
        ArgumentNullException.ThrowIfNull(refusal);
        lock (_lock)
        {
            _refused++;
            List(new SendOutcome
            {
                Index = index,
                Receiver = refusal.Receiver,
                Kind = SendOutcomeKind.Refused,
                Reason = refusal.Reason.ToString(),
                Detail = refusal.Message,
            });
        }
        _changed.Writer.TryWrite(true);
    }

    private void List(SendOutcome outcome)
    {
        if (_outcomes.Count < MaxListed)
        {
            _outcomes.Enqueue(outcome);
        }
        else
        {
            _notListed++;
        }
    }

    /// <summary>
    /// Reports until <paramref name="inputDone"/> completes, everything accepted is acknowledged and has its outcome,
    /// and every outcome is written; or until the call ends.
    /// </summary>
    public async Task RunAsync(Task inputDone, CancellationToken ct)
    {
        var waiter = new ChannelWaiter<bool>(_changed.Reader);
        SendProgress? reported = null;
        while (!ct.IsCancellationRequested)
        {
            while (_changed.Reader.TryRead(out _))
            {
            }
            // Read before the figures: the input's last message is counted before the input completes, so figures read
            // after seeing it complete include it. Read after them, a message accepted in between would end the stream
            // as settled without its outcome.
            var inputWasDone = inputDone.IsCompleted;
            var (next, settled) = Next();
            if (next.Outcomes.Count > 0 || reported is null || !SameFigures(next, reported))
            {
                await _write(next, ct).ConfigureAwait(false);
                reported = next;
            }
            if (inputWasDone && settled)
            {
                return;
            }
            // Once the input is done it no longer signals anything: waiting on it again would spin a core until the
            // acknowledgements arrive (for as long as the deployment is unreachable).
            Task[] signals = inputDone.IsCompleted ? [waiter.Readable(ct)] : [waiter.Readable(ct), inputDone];
            await PumpWait.AnyAsync(signals, (long)AckPoll.TotalMilliseconds, ct).ConfigureAwait(false);
        }
    }

    private (SendProgress Next, bool Settled) Next()
    {
        var acknowledged = _acknowledgedUpTo();
        lock (_lock)
        {
            var p = new SendProgress
            {
                Accepted = _accepted,
                LastSeq = _lastSeq,
                Acknowledged = acknowledged,
                Delivered = _delivered,
                Refused = _refused,
                OutcomesNotListed = _notListed,
            };
            while (_outcomes.Count > 0 && p.Outcomes.Count < MaxPerProgress)
            {
                p.Outcomes.Add(_outcomes.Dequeue());
            }
            var settled = acknowledged >= _lastSeq && _unsettled <= 0 && _outcomes.Count == 0;
            return (p, settled);
        }
    }

    private static bool SameFigures(SendProgress a, SendProgress b) =>
        a.Accepted == b.Accepted && a.LastSeq == b.LastSeq && a.Acknowledged == b.Acknowledged && a.Delivered == b.Delivered
        && a.Refused == b.Refused && a.OutcomesNotListed == b.OutcomesNotListed;
}
