using System.Globalization;
using SieveQ.Rules.Document;
using SieveQ.Rules.Formats;

namespace SieveQ.Rules.Evaluation;

/// <summary>
/// A per-flow state machine over message types: requests (sender to receiver) must follow a
/// transition from the flow's current state, responses (the reverse direction) may move it, and at
/// most <see cref="MaxOutstanding"/> requests wait for a response. Symbols and states are numbered at
/// compile time, so a step is a dictionary lookup.
/// </summary>
internal sealed class FlowMachine
{
    private const int AnyState = -1;
    private const int Stay = -1;

    private readonly Dictionary<string, int> _textSymbols = new(StringComparer.Ordinal);
    private readonly Dictionary<long, int> _integerSymbols = [];
    private readonly Dictionary<(FlowRole Role, int State, int Symbol), int> _transitions = [];
    private readonly Dictionary<string, int> _stateIndex = new(StringComparer.Ordinal);

    public FlowMachine(int index, FlowSpec spec)
    {
        Index = index;
        Name = spec.Name;
        MaxOutstanding = spec.MaxOutstanding;
        IdleTimeoutMs = spec.IdleTimeoutMs;
        var states = new List<string>();
        int State(string s)
        {
            if (!_stateIndex.TryGetValue(s, out var i))
            {
                i = states.Count;
                states.Add(s);
                _stateIndex.Add(s, i);
            }
            return i;
        }
        Initial = State(spec.Initial);
        var entered = new HashSet<string>(StringComparer.Ordinal) { spec.Initial };
        foreach (var t in spec.Transitions)
        {
            if (t.To is { } to)
            {
                entered.Add(to);
            }
        }
        foreach (var t in spec.Transitions)
        {
            if (t.From is { } from && !entered.Contains(from))
            {
                throw new RuleSetException(RuleSetErrorKind.Reference, t.Path + "/from",
                    $"state \"{from}\" of flow \"{spec.Name}\" is never entered (it is neither the initial state nor any transition's target)");
            }
            var fromIndex = t.From is null ? AnyState : State(t.From);
            var toIndex = t.To is null ? Stay : State(t.To);
            for (var k = 0; k < t.On.Count; k++)
            {
                var key = (t.Role, fromIndex, Symbol(t.On[k]));
                if (!_transitions.TryAdd(key, toIndex))
                {
                    throw new RuleSetException(RuleSetErrorKind.Reference, $"{t.Path}/on/{k}",
                        $"flow \"{spec.Name}\" already has a {t.Role.ToString().ToLowerInvariant()} transition from {t.From ?? "*"} on \"{t.On[k]}\"");
                }
            }
            HasRequestTransitions |= t.Role == FlowRole.Request;
            HasResponseTransitions |= t.Role == FlowRole.Response;
        }
        States = [.. states];
    }

    public int Index { get; }

    public string Name { get; }

    public int Initial { get; }

    public string[] States { get; }

    public int? MaxOutstanding { get; }

    public long? IdleTimeoutMs { get; }

    public bool HasRequestTransitions { get; }

    public bool HasResponseTransitions { get; }

    /// <summary>Whether the machine reads message types (so rules using it need a format that has one).</summary>
    public bool NeedsMessageType => HasRequestTransitions || HasResponseTransitions;

    public bool TryState(string name, out int index) => _stateIndex.TryGetValue(name, out index);

    /// <summary>
    /// The step a message would cause: the flow's next state and outstanding count, or the reason it
    /// is out of order. Pure: the caller commits the step only if every other check passes.
    /// </summary>
    public FlowStep Step(int state, int outstanding, FlowRole role, MessageType type)
    {
        var symbol = Lookup(type);
        var next = state;
        if (role == FlowRole.Request)
        {
            if (HasRequestTransitions)
            {
                if (!TryTransition(role, state, symbol, out var to))
                {
                    return FlowStep.Refuse($"flow {Name}: request type {type} not allowed in state {States[state]}");
                }
                next = to == Stay ? state : to;
            }
            if (MaxOutstanding is { } max)
            {
                if (outstanding >= max)
                {
                    return FlowStep.Refuse($"flow {Name}: {outstanding} requests already outstanding, limit {max}");
                }
                outstanding++;
            }
            return FlowStep.Accept(next, outstanding);
        }
        if (MaxOutstanding is not null)
        {
            if (outstanding == 0)
            {
                return FlowStep.Refuse($"flow {Name}: response with no outstanding request");
            }
            outstanding--;
        }
        if (HasResponseTransitions && TryTransition(role, state, symbol, out var after))
        {
            next = after == Stay ? state : after;
        }
        return FlowStep.Accept(next, outstanding);
    }

    private bool TryTransition(FlowRole role, int state, int symbol, out int to)
    {
        to = Stay;
        return symbol >= 0 && (_transitions.TryGetValue((role, state, symbol), out to) || _transitions.TryGetValue((role, AnyState, symbol), out to));
    }

    private int Lookup(MessageType type)
    {
        if (!type.Present)
        {
            return -1;
        }
        if (type.Text is { } text)
        {
            return _textSymbols.TryGetValue(text, out var s) ? s : -1;
        }
        return _integerSymbols.TryGetValue(type.Integer, out var n) ? n : -1;
    }

    private int Symbol(string value)
    {
        if (_textSymbols.TryGetValue(value, out var s))
        {
            return s;
        }
        s = _textSymbols.Count;
        _textSymbols.Add(value, s);
        // "3" and 3 are the same type: a canonical decimal is also an integer symbol.
        if (long.TryParse(value, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var n)
            && n.ToString(CultureInfo.InvariantCulture) == value)
        {
            _integerSymbols.TryAdd(n, s);
        }
        return s;
    }
}

/// <summary>The result of a flow step: accepted with the new state and count, or refused with a reason.</summary>
internal readonly record struct FlowStep(bool Ok, int State, int Outstanding, string? Problem)
{
    public static FlowStep Accept(int state, int outstanding) => new(true, state, outstanding, null);

    public static FlowStep Refuse(string problem) => new(false, 0, 0, problem);
}
