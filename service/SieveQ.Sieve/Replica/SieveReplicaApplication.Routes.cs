using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;

namespace SieveQ.Sieve.Replica;

public sealed partial class SieveReplicaApplication
{
    /// <summary>
    /// Allow or remove a route, after the administrator signature and nonce were checked. Only the fixed routes change
    /// this way: a deployment with signed rule sets says where a sender may send in its rule set. Allowing names an
    /// enrolled sender and receiver (a typo is refused rather than kept as a route to nobody); removing names a route
    /// that exists. Messages already queued for a receiver are still delivered; one held ahead of a gap in its sender's
    /// numbers is judged when its turn comes, by the routes of then.
    /// </summary>
    private AdminCommandResult ApplyRouteChange(AdminCommand command)
    {
        var (sender, receiver) = (command.Target, command.RouteReceiver);
        var what = command.Op == AdminOp.AllowRoute
            ? $"allow route sender {sender} -> receiver {receiver} (up to {command.RouteMaxBytes} bytes)"
            : $"remove route sender {sender} -> receiver {receiver}";
        if (_rules is not RoutePolicy routes)
        {
            return Refused($"{what}: this deployment runs signed rule sets, which say where each sender may send; push a new version (`sieveq rules push`)");
        }
        string outcome;
        if (command.Op == AdminOp.AllowRoute)
        {
            if (!_keys.IsSender(sender))
            {
                return Refused($"{what}: sender {sender} is not enrolled");
            }
            if (!_keys.IsReceiver(receiver))
            {
                return Refused($"{what}: receiver {receiver} is not enrolled");
            }
            var before = routes.Limit(sender, receiver);
            if (!routes.Allow(sender, receiver, command.RouteMaxBytes))
            {
                return Refused($"{what}: the route table is full ({RoutePolicy.MaxRoutes} routes)");
            }
            outcome = before is { } old ? $"applied (the route's limit was {old} bytes)" : "applied (a new route)";
        }
        else
        {
            if (!routes.Remove(sender, receiver))
            {
                return Refused($"{what}: there is no such route");
            }
            outcome = "applied";
        }
        _admin.LastNonce = command.Nonce;
        SieveMetrics.RouteChange(Component, command.Op == AdminOp.AllowRoute);
        return new AdminCommandResult(true, _admin.LastNonce, $"{what}: {outcome} (route change {routes.Changes})");
    }
}
