namespace SieveQ.Sieve.Replica;

/// <summary>One allowed sender-to-receiver route and the largest DATA it may carry.</summary>
public readonly record struct Route(int Sender, int Receiver, int MaxBytes);

/// <summary>
/// The default rule set: a message passes only on an allowed (sender, receiver) route and within
/// that route's size limit (paper 3.3: "a pre-defined sender-SQ can only send messages to a
/// particular post-SQ"). Stateless, so its snapshot is empty. The full rule engine replaces it.
/// </summary>
public sealed class RoutePolicy : IApplicationRules
{
    private readonly Dictionary<(int, int), int> _routes;

    public RoutePolicy(IEnumerable<Route> routes)
    {
        ArgumentNullException.ThrowIfNull(routes);
        _routes = [];
        foreach (var r in routes)
        {
            _routes[(r.Sender, r.Receiver)] = r.MaxBytes;
        }
    }

    public RuleVerdict Evaluate(in RuleInput input)
    {
        if (!_routes.TryGetValue((input.Sender, input.Receiver), out var max))
        {
            return RuleVerdict.Deny("route not allowed");
        }
        return input.Data.Length <= max ? RuleVerdict.Allow : RuleVerdict.Deny("message too large for route");
    }

    public byte[] SnapshotState() => [];

    public void RestoreState(ReadOnlySpan<byte> state)
    {
        if (!state.IsEmpty)
        {
            throw new Envelope.MalformedEnvelopeException("route policy has no state");
        }
    }
}
