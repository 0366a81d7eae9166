using System.Text;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;

namespace SieveQ.Rules.Evaluation;

/// <summary>
/// The evaluator's state in canonical bytes: the same decisions give the same bytes on every replica.
/// Layout (little-endian, as every SieveQ structure): "SIEVEQ/RULES-STATE/v1" | 32 rule-set digest |
/// u64 use counter | u64 evicted senders | u64 evicted flows | senders ascending by id | flows ascending
/// by (flow name, requester, responder). Rates inside a sender go by name; names are u32 length + UTF-8.
/// Each entry carries its use stamp, which rebuilds the eviction order exactly.
/// </summary>
public sealed partial class RuleEvaluator
{
    private static readonly byte[] StateTag = "SIEVEQ/RULES-STATE/v1"u8.ToArray();

    private const int MaxNameBytes = 256;

    public byte[] SnapshotState()
    {
        using var w = new CanonicalWriter(256 + (_senders.Count * 64) + (_flows.Count * 48));
        w.Raw(StateTag);
        w.Raw(_set.Digest.Span);
        w.Seq(_uses);
        w.Seq(_senders.Evictions);
        w.Seq(_flows.Evictions);
        var senders = _senders.InUseOrder().OrderBy(s => s.Key).ToList();
        w.Id(senders.Count);
        foreach (var s in senders)
        {
            w.Id(s.Key);
            w.Seq(s.Stamp);
            w.Bool(s.Suspicion is not null);
            s.Suspicion?.WriteTo(w);
            var rates = _set.Rates.Where(r => s.Rates[r.Index] is not null).OrderBy(r => r.Name, StringComparer.Ordinal).ToList();
            w.Id(rates.Count);
            foreach (var rate in rates)
            {
                var win = s.Rates[rate.Index]!;
                w.Bytes(Encoding.UTF8.GetBytes(rate.Name));
                w.Seq(rate.WindowMs);
                w.I64(win.WindowStart);
                w.Seq(win.PreviousMessages);
                w.Seq(win.PreviousBytes);
                w.Seq(win.CurrentMessages);
                w.Seq(win.CurrentBytes);
            }
        }
        var flows = _flows.InUseOrder()
            .OrderBy(f => _set.Flows[f.Key.Machine].Name, StringComparer.Ordinal)
            .ThenBy(f => f.Key.Requester)
            .ThenBy(f => f.Key.Responder)
            .ToList();
        w.Id(flows.Count);
        foreach (var f in flows)
        {
            var machine = _set.Flows[f.Key.Machine];
            w.Bytes(Encoding.UTF8.GetBytes(machine.Name));
            w.Id(f.Key.Requester);
            w.Id(f.Key.Responder);
            w.Seq(f.Stamp);
            w.Bytes(Encoding.UTF8.GetBytes(machine.States[f.State]));
            w.Id(f.Outstanding);
            w.I64(f.LastSeenMs);
        }
        return w.ToArray();
    }

    /// <summary>
    /// Replaces the state with a snapshot taken under this very rule set (same digest). Throws only
    /// <see cref="MalformedEnvelopeException"/>; on failure the current state is kept.
    /// </summary>
    public void RestoreState(ReadOnlySpan<byte> state) => Import(state, strict: true);

    /// <summary>
    /// Takes over another version's state at a switch: suspicion (if this version has a quarantine
    /// policy), rate windows whose rate still exists with the same window, flows whose machine and
    /// state still exist. What no longer has a meaning is dropped, and the tables are cut down to this
    /// version's limits in least-recently-used order.
    /// </summary>
    public void TakeOver(RuleEvaluator previous)
    {
        ArgumentNullException.ThrowIfNull(previous);
        Import(previous.SnapshotState(), strict: false);
    }

    private void Import(ReadOnlySpan<byte> state, bool strict)
    {
        var r = new CanonicalReader(state);
        if (!r.Take(StateTag.Length, "rules state tag").SequenceEqual(StateTag))
        {
            throw new MalformedEnvelopeException("not a rules state");
        }
        var digest = r.Take(32, "rule-set digest");
        if (strict && !digest.SequenceEqual(_set.Digest.Span))
        {
            throw new MalformedEnvelopeException($"rules state belongs to another rule set, not version {_set.Version} ({_set.DigestHex})");
        }
        var uses = r.Seq("use counter");
        var evictedSenders = r.Seq("evicted senders");
        var evictedFlows = r.Seq("evicted flows");
        var senderLimit = strict ? _set.Limits.MaxSenders : 1 << 20;
        var senderCount = r.Count(senderLimit, "senders");
        var senders = new List<SenderState>(senderCount);
        var lastId = -1;
        for (var i = 0; i < senderCount; i++)
        {
            var s = ReadSender(ref r, strict, uses);
            if (s.Key <= lastId)
            {
                throw new MalformedEnvelopeException("senders not in ascending order");
            }
            lastId = s.Key;
            senders.Add(s);
        }
        var flowCount = r.Count(strict ? _set.Limits.MaxFlows : 1 << 20, "flows");
        var flows = new List<FlowState>(flowCount);
        var seen = new HashSet<FlowKey>();
        for (var i = 0; i < flowCount; i++)
        {
            if (ReadFlow(ref r, strict, uses) is { } f)
            {
                if (!seen.Add(f.Key))
                {
                    throw new MalformedEnvelopeException("flow listed twice");
                }
                flows.Add(f);
            }
        }
        r.End("rules state");

        // Parsed completely: only now replace anything.
        _senders.Clear();
        _flows.Clear();
        _uses = uses;
        _senders.Evictions = evictedSenders;
        _flows.Evictions = evictedFlows;
        foreach (var s in senders.OrderBy(s => s.Stamp).ThenBy(s => s.Key))
        {
            _senders.Add(s, s.Stamp);
        }
        foreach (var f in flows.OrderBy(f => f.Stamp).ThenBy(f => f.Key.Machine).ThenBy(f => f.Key.Requester).ThenBy(f => f.Key.Responder))
        {
            _flows.Add(f, f.Stamp);
        }
    }

    private SenderState ReadSender(ref CanonicalReader r, bool strict, long uses)
    {
        var s = new SenderState(r.Id("sender"), _set.Rates.Length) { Stamp = Stamp(ref r, uses) };
        if (r.Bool("has suspicion"))
        {
            var counter = SuspicionCounter.ReadFrom(ref r);
            if (_set.Quarantine is not null)
            {
                s.Suspicion = counter;
            }
            else if (strict)
            {
                throw new MalformedEnvelopeException("suspicion state, but this rule set has no quarantine policy");
            }
        }
        var rateCount = r.Count(_set.Rates.Length + (strict ? 0 : 256), "rates");
        string? lastName = null;
        for (var k = 0; k < rateCount; k++)
        {
            var name = Name(ref r, "rate name");
            if (lastName is not null && string.CompareOrdinal(lastName, name) >= 0)
            {
                throw new MalformedEnvelopeException("rates not in name order");
            }
            lastName = name;
            var windowMs = r.Seq("rate window");
            var win = new RateWindow
            {
                WindowStart = r.I64("window start"),
                PreviousMessages = r.Seq("previous messages"),
                PreviousBytes = r.Seq("previous bytes"),
                CurrentMessages = r.Seq("current messages"),
                CurrentBytes = r.Seq("current bytes"),
            };
            if (_set.RateByName.TryGetValue(name, out var rate) && rate.WindowMs == windowMs)
            {
                s.Rates[rate.Index] = win;
            }
            else if (strict)
            {
                throw new MalformedEnvelopeException($"rate \"{name}\" with a {windowMs} ms window is not in this rule set");
            }
        }
        return s;
    }

    private FlowState? ReadFlow(ref CanonicalReader r, bool strict, long uses)
    {
        var name = Name(ref r, "flow name");
        var requester = r.Id("requester");
        var responder = r.Id("responder");
        var stamp = Stamp(ref r, uses);
        var stateName = Name(ref r, "flow state");
        var outstanding = r.Id("outstanding");
        var lastSeen = r.I64("last seen");
        if (_set.FlowByName.TryGetValue(name, out var machine) && machine.TryState(stateName, out var stateIndex))
        {
            return new FlowState(new FlowKey(machine.Index, requester, responder))
            {
                Stamp = stamp,
                State = stateIndex,
                Outstanding = outstanding,
                LastSeenMs = lastSeen,
            };
        }
        if (strict)
        {
            throw new MalformedEnvelopeException($"flow \"{name}\" in state \"{stateName}\" is not in this rule set");
        }
        return null;
    }

    private static long Stamp(ref CanonicalReader r, long uses)
    {
        var stamp = r.Seq("use stamp");
        return stamp <= uses ? stamp : throw new MalformedEnvelopeException("use stamp above the use counter");
    }

    private static string Name(ref CanonicalReader r, string field)
    {
        var bytes = r.Bytes(MaxNameBytes, field);
        try
        {
            return new UTF8Encoding(false, true).GetString(bytes);
        }
        catch (DecoderFallbackException e)
        {
            throw new MalformedEnvelopeException($"{field}: not UTF-8", e);
        }
    }
}
