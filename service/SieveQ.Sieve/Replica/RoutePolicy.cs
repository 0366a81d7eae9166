using System.Collections.Immutable;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Replica;

/// <summary>One allowed sender-to-receiver route and the largest DATA it may carry.</summary>
public readonly record struct Route(int Sender, int Receiver, int MaxBytes);

/// <summary>
/// The default rule set: a message passes only on an allowed (sender, receiver) route and within
/// that route's size limit (paper 3.3: "a pre-defined sender-SQ can only send messages to a
/// particular post-SQ"). The deployment file gives the initial routes; administrator commands ordered since
/// (<see cref="Allow"/>, <see cref="Remove"/>) change them without restart, so the table is agreed state and travels in
/// the snapshot. Bounded by <see cref="MaxRoutes"/>.
/// </summary>
public sealed class RoutePolicy : IApplicationRules
{
    /// <summary>Routes a replica keeps at most: 12 bytes each in the snapshot, far inside the state budget's rules allowance.</summary>
    public const int MaxRoutes = 65_536;

    private readonly ImmutableSortedDictionary<(int Sender, int Receiver), int> _initial;
    private ImmutableSortedDictionary<(int Sender, int Receiver), int> _routes;
    private long _changes;

    public RoutePolicy(IEnumerable<Route> routes)
    {
        ArgumentNullException.ThrowIfNull(routes);
        var b = ImmutableSortedDictionary.CreateBuilder<(int, int), int>();
        foreach (var r in routes)
        {
            b[(r.Sender, r.Receiver)] = r.MaxBytes;
        }
        _initial = b.ToImmutable();
        _routes = _initial;
    }

    /// <summary>Route changes applied through the ordering since the deployment file's routes (agreed state).</summary>
    public long Changes => Volatile.Read(ref _changes);

    /// <summary>The routes now, ascending by sender then receiver (any thread: an immutable table swapped whole).</summary>
    public IReadOnlyList<Route> Current() => [.. Volatile.Read(ref _routes).Select(e => new Route(e.Key.Sender, e.Key.Receiver, e.Value))];

    /// <summary>The routes from <paramref name="sender"/> now (any thread).</summary>
    public IReadOnlyList<Route> From(int sender) =>
        [.. Volatile.Read(ref _routes).Where(e => e.Key.Sender == sender).Select(e => new Route(sender, e.Key.Receiver, e.Value))];

    /// <summary>The route's size limit now, or null when there is no such route (execution thread).</summary>
    public int? Limit(int sender, int receiver) => _routes.TryGetValue((sender, receiver), out var max) ? max : null;

    public RuleVerdict Evaluate(in RuleInput input)
    {
        if (!_routes.TryGetValue((input.Sender, input.Receiver), out var max))
        {
            return RuleVerdict.Deny("route not allowed");
        }
        return input.Data.Length <= max ? RuleVerdict.Allow : RuleVerdict.Deny("message too large for route");
    }

    /// <summary>Adds the route or sets its limit (agreed execution only). False when the table is full and the route new.</summary>
    public bool Allow(int sender, int receiver, int maxBytes)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(maxBytes);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(maxBytes, EnvelopeLimits.MaxDataBytes);
        if (!_routes.ContainsKey((sender, receiver)) && _routes.Count >= MaxRoutes)
        {
            return false;
        }
        Volatile.Write(ref _routes, _routes.SetItem((sender, receiver), maxBytes));
        Volatile.Write(ref _changes, _changes + 1);
        return true;
    }

    /// <summary>Takes the route away (agreed execution only). False when there was no such route.</summary>
    public bool Remove(int sender, int receiver)
    {
        if (!_routes.ContainsKey((sender, receiver)))
        {
            return false;
        }
        Volatile.Write(ref _routes, _routes.Remove((sender, receiver)));
        Volatile.Write(ref _changes, _changes + 1);
        return true;
    }

    /// <summary>
    /// Empty while the routes are the deployment file's (so snapshots of either kind restore alike); otherwise
    /// <c>u64 changes | u32 n | n x (u32 sender | u32 receiver | u32 max bytes)</c>, ascending.
    /// </summary>
    public byte[] SnapshotState()
    {
        if (_changes == 0)
        {
            return [];
        }
        using var w = new CanonicalWriter(8 + 4 + (_routes.Count * 12));
        w.Seq(_changes);
        w.Id(_routes.Count);
        foreach (var ((sender, receiver), max) in _routes)
        {
            w.Id(sender);
            w.Id(receiver);
            w.Id(max);
        }
        return w.ToArray();
    }

    /// <summary>Reads the whole table before it replaces anything, so a malformed state changes nothing.</summary>
    public void RestoreState(ReadOnlySpan<byte> state)
    {
        if (state.IsEmpty)
        {
            Volatile.Write(ref _routes, _initial);
            Volatile.Write(ref _changes, 0);
            return;
        }
        var r = new CanonicalReader(state);
        var changes = r.Seq("route changes");
        if (changes < 1)
        {
            throw new MalformedEnvelopeException("route table: a changed table counts at least one change");
        }
        var n = r.Count(MaxRoutes, "routes");
        var b = ImmutableSortedDictionary.CreateBuilder<(int, int), int>();
        (int, int)? previous = null;
        for (var i = 0; i < n; i++)
        {
            var key = (r.Id("route sender"), r.Id("route receiver"));
            var max = r.Id("route size limit");
            if (previous is { } p && Comparer<(int, int)>.Default.Compare(key, p) <= 0)
            {
                throw new MalformedEnvelopeException("route table: routes not in ascending order");
            }
            if (max > EnvelopeLimits.MaxDataBytes)
            {
                throw new MalformedEnvelopeException($"route table: a size limit above {EnvelopeLimits.MaxDataBytes} bytes");
            }
            previous = key;
            b[key] = max;
        }
        r.End("route table");
        Volatile.Write(ref _routes, b.ToImmutable());
        Volatile.Write(ref _changes, changes);
    }
}
