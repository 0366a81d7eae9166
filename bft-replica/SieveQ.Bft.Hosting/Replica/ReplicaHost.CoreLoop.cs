using System.Diagnostics;
using Microsoft.Extensions.Logging;
using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Transport;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Replica;

/// <summary>The core loop: the only code that touches the core. Steps queued messages, ticks timers, acts on outputs.</summary>
public sealed partial class ReplicaHost
{
    private readonly TurnFlag _coreTurn = new();
    private volatile Exception? _coreFault;

    /// <summary>
    /// The core's fallback loop: it drains when the timer or a hand-off rings the doorbell. Most drains do
    /// not come through here but run on the thread that queued the work (<see cref="RunCoreInline"/>).
    /// Whoever drains holds <see cref="_coreTurn"/>, so the core still runs on one thread at a time.
    /// </summary>
    private async Task RunCoreAsync(CancellationToken ct)
    {
        var core = _core!;
        try
        {
            while (!ct.IsCancellationRequested)
            {
                await _inbox.WaitAsync(ct).ConfigureAwait(false);
                if (_coreFault is { } fault)
                {
                    throw new InvalidOperationException("the core failed on an inline drain", fault);
                }
                while (!ct.IsCancellationRequested && _coreTurn.TryTake())
                {
                    bool more;
                    try
                    {
                        more = await DrainOnceAsync(core, ct).ConfigureAwait(false);
                    }
                    finally
                    {
                        _coreTurn.Release();
                    }
                    if (!more && _inbox.IsEmpty)
                    {
                        break;
                    }
                }
            }
        }
        catch (OperationCanceledException) when (ct.IsCancellationRequested)
        {
            // stopping
        }
        catch (Exception e)
        {
            LogCoreCrashed(e);
            throw;
        }
        finally
        {
            // Takes the core for good, waiting (bounded) for an inline drain in progress.
            await _coreTurn.CloseWhenFreeAsync(5_000).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Runs one drain on the calling thread (a link's receive loop) if the core is idle. Handing each message
    /// to the core loop would cost a wake-up and two context switches per protocol step, which on a small,
    /// busy machine dominate the latency of an instance. One drain at most: if more work remains, the core
    /// loop takes it, so a link's receive loop is never held for longer than one drain.
    /// </summary>
    private void RunCoreInline()
    {
        if (_stop.IsCancellationRequested || !_coreTurn.TryTake())
        {
            return;  // the thread that holds the core looks at the inbox again before it lets go
        }
        ValueTask<bool> drain;
        try
        {
            drain = DrainOnceAsync(_core!, _stop.Token);
        }
        catch (Exception e)
        {
            InlineDrainFailed(e);
            return;
        }
        if (drain.IsCompletedSuccessfully)
        {
            ReleaseAfterInline(drain.Result);
        }
        else
        {
            _ = FinishInlineAsync(drain);
        }
    }

    private async Task FinishInlineAsync(ValueTask<bool> drain)
    {
        bool more;
        try
        {
            more = await drain.ConfigureAwait(false);
        }
        catch (Exception e)
        {
            InlineDrainFailed(e);
            return;
        }
        ReleaseAfterInline(more);
    }

    private void ReleaseAfterInline(bool more)
    {
        _coreTurn.Release();
        if (more || !_inbox.IsEmpty)
        {
            _inbox.Ring();  // hand the rest to the core loop
        }
    }

    private void InlineDrainFailed(Exception e)
    {
        _coreTurn.Release();
        if (e is OperationCanceledException && _stop.IsCancellationRequested)
        {
            return;
        }
        _coreFault = e;
        _inbox.Ring();  // the core loop reports the failure and ends
    }

    /// <summary>One group: step everything queued (bounded), tick if due, act on the outputs. True if work is left.</summary>
    private async ValueTask<bool> DrainOnceAsync(ReplicaCore core, CancellationToken ct)
    {
        var now = _clock.NowMs;
        var start = Stopwatch.GetTimestamp();
        var steps = 0;
        var stepDown = TakeStepDown(core, now);
        while (steps < MaxStepsPerDrain && (_inbox.TryTakeReplica(out var item) || _inbox.TryTakeClient(out item)))
        {
            core.Step(item.Message, now);
            item.Release();
            steps++;
        }
        if (now >= core.NextWakeup)
        {
            core.Tick(now);
        }
        StageTimings.Add(Stage.CoreStep, start, steps);
        var outputs = core.DrainOutputs();
        if (outputs.Count > 0)
        {
            await ActAsync(outputs, ct).ConfigureAwait(false);
        }
        if (stepDown is { } asked)
        {
            asked.Request.TrySetResult(asked.Asked);
        }
        LogTransitions(core);
        if (now - _lastStatusAt >= StatusIntervalMs)
        {
            _lastStatusAt = now;
            _status = Snapshot(core, now);
        }
        ArmTimer(core.NextWakeup, now);
        return !_inbox.IsEmpty;
    }

    private async ValueTask ActAsync(List<CoreOutput> outputs, CancellationToken ct)
    {
        var start = Stopwatch.GetTimestamp();
        var sends = new List<PendingSend>();
        List<SendTo>? replies = null;
        List<CoreOutput>? records = null;
        var gating = false;
        foreach (var o in outputs)
        {
            switch (o)
            {
                case SendTo s when s.To == _self:
                    _inbox.EnqueueReplica(new InboundItem(s.Message, null, 0));  // this drain reports more work, so it is taken next
                    break;
                case SendTo s when s.To >= _config.N:
                    (replies ??= []).Add(s);  // encoded after the replica traffic, see below
                    break;
                case SendTo s:
                    sends.Add(new PendingSend(s.To, OutboundPayload.Encode(s.Message)));
                    break;
                case SendToReplicas s:
                    sends.Add(new PendingSend(PendingSend.AllReplicas, OutboundPayload.Encode(s.Message, references: Math.Max(1, _peers.Count))));
                    break;
                case ApplicationOutputs a:
                    // At once and in decision order: they follow a decision record, which gates no send.
                    _appOutputs?.Accept(a.ConsensusId, a.Outputs);
                    break;
                case Decided d:
                    _decided++;
                    _executed += d.Executed;
                    _metrics.Decided(d.Value.Requests.Count, d.Executed);
                    break;
                case Persist p when _durability is not null:
                    (records ??= []).Add(o);
                    gating |= p.Record.GatesLaterSends;
                    break;
                case TruncateDurableLog when _durability is not null:
                    (records ??= []).Add(o);
                    gating = true;
                    break;
            }
        }
        // Sends wait for the disk only behind records that gate them, or behind earlier gating work (FIFO).
        var durable = _durability is not null && (gating || _durability.Busy);
        if (!durable)
        {
            // Replica traffic (the next PROPOSE, WRITEs, ACCEPTs) is on the critical path of the next decision;
            // hand it to the links before spending time encoding hundreds of client replies. Order across
            // different links carries no meaning, so this reordering is safe.
            SendAll(sends);
            sends.Clear();
        }
        if (replies is not null)
        {
            foreach (var r in replies)
            {
                sends.Add(new PendingSend(r.To, OutboundPayload.Encode(r.Message)));
            }
        }
        StageTimings.Add(Stage.Encode, start, outputs.Count);
        if (durable)
        {
            await _durability!.SubmitAsync(records ?? [], sends, ct).ConfigureAwait(false);
        }
        else
        {
            SendAll(sends);
            if (records is not null)
            {
                await _durability!.SubmitLazyAsync(records, ct).ConfigureAwait(false);
            }
        }
    }

    /// <summary>
    /// Routes encoded messages to links; called by the core loop or, after fsync, by the durability stage.
    /// Each link is kicked once, after all of its messages are queued, so they share a frame and a send.
    /// </summary>
    private void SendAll(List<PendingSend> sends)
    {
        var kicks = t_kicks ??= [];  // per thread: the core loop and the durability stage both send
        foreach (var s in sends)
        {
            if (s.To == PendingSend.AllReplicas)
            {
                if (_peers.Count == 0)
                {
                    s.Payload.Release();
                }
                foreach (var p in _peers.Values)
                {
                    p.Queue.TryEnqueueDeferred(s.Payload);
                    AddKick(kicks, p.Queue);
                }
            }
            else if (s.To < _config.N)
            {
                if (_peers.TryGetValue(s.To, out var p))
                {
                    p.Queue.TryEnqueueDeferred(s.Payload);
                    AddKick(kicks, p.Queue);
                }
                else
                {
                    s.Payload.Release();
                }
            }
            else if (_clients.TrySendDeferred(s.To, s.Payload) is { } q)
            {
                AddKick(kicks, q);
            }
        }
        foreach (var q in kicks)
        {
            q.Kick();
        }
        kicks.Clear();
    }

    [ThreadStatic]
    private static List<SendQueue>? t_kicks;

    private static void AddKick(List<SendQueue> kicks, SendQueue queue)
    {
        if (!kicks.Contains(queue))
        {
            kicks.Add(queue);
        }
    }

    private void ArmTimer(long nextWakeup, long now)
    {
        // Wake at the core's deadline, and at least every status interval so status stays fresh when idle.
        var target = Math.Min(nextWakeup, now + StatusIntervalMs);
        if (target == _armedFor && target > now)
        {
            return;
        }
        _armedFor = target;
        _timer?.Change(Math.Max(1, target - now), Timeout.Infinite);
    }
}
