using SieveQ.Sieve.Envelope;

namespace SieveQ.Sdk.Sender;

/// <summary>
/// What the sender can tell up front from the configuration it was created with: the enrolled receivers and, when the
/// replicas run the fixed routes (no signed rule sets), the routes and their size limits. With signed rule sets
/// the rules decide at the replicas and only enrolment and the sieve's own size limit are checked here.
/// </summary>
internal sealed class SendAdmission
{
    private readonly int _sender;
    private readonly HashSet<int> _receivers;
    private readonly Dictionary<int, int>? _routeMaxBytes;

    private SendAdmission(int sender, HashSet<int> receivers, Dictionary<int, int>? routeMaxBytes)
    {
        _sender = sender;
        _receivers = receivers;
        _routeMaxBytes = routeMaxBytes;
    }

    public static SendAdmission For(SieveQClientConfiguration config, int sender)
    {
        var receivers = config.Enrolment.Receivers.Select(r => r.Id).ToHashSet();
        var routes = config.Routes?.Where(r => r.Sender == sender).GroupBy(r => r.Receiver).ToDictionary(g => g.Key, g => g.Max(r => r.MaxBytes));
        return new SendAdmission(sender, receivers, routes);
    }

    /// <exception cref="SendRefusedException">The deployment would refuse the message; says which enrolment, route or limit.</exception>
    public void Check(int receiver, int dataBytes)
    {
        if (!_receivers.Contains(receiver))
        {
            throw new SendRefusedException(SendRefusal.ReceiverNotEnrolled, _sender, receiver,
                $"receiver {receiver} is not enrolled in this deployment (enrolled: {string.Join(", ", _receivers.Order())})");
        }
        if (_routeMaxBytes is null)
        {
            return;
        }
        if (!_routeMaxBytes.TryGetValue(receiver, out var max))
        {
            throw new SendRefusedException(SendRefusal.NoRoute, _sender, receiver,
                $"the deployment has no route from sender {_sender} to receiver {receiver}; add one to its routes");
        }
        var limit = Math.Min(max, EnvelopeLimits.MaxDataBytes);
        if (dataBytes > limit)
        {
            throw new SendRefusedException(SendRefusal.TooLarge, _sender, receiver,
                $"{dataBytes} bytes of data are above the {limit} bytes the route from sender {_sender} to receiver {receiver} admits", limit);
        }
    }
}
