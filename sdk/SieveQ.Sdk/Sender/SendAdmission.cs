using System.Collections.Immutable;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Replica;

namespace SieveQ.Sdk.Sender;

/// <summary>
/// What the sender can tell up front: the enrolled receivers and, when the replicas run fixed routes (no signed rule
/// sets), the routes and their size limits. With signed rule sets the rules decide at the replicas and only enrolment
/// and the sieve's own size limit are checked here.
/// <para>
/// Fixed routes and receivers change through the ordering (<c>sieveq route</c>, <c>sieveq enrol receiver</c>), so the
/// view here may be behind: before a message is refused for its receiver or its route, the running deployment is asked
/// (f+1 replicas alike) whether that receiver is enrolled and which routes the sender has, at most once per
/// <see cref="RefreshInterval"/>; what they agree on replaces the view. When the deployment does not answer, the view
/// stands.
/// </para>
/// </summary>
internal sealed class SendAdmission
{
    /// <summary>How often, at most, a route refusal asks the deployment again: refusals in a burst cost it one lookup.</summary>
    public static readonly TimeSpan RefreshInterval = TimeSpan.FromSeconds(2);

    private readonly int _sender;
    private readonly Func<CancellationToken, Task<IReadOnlyList<Route>?>>? _askRoutes;
    private readonly Func<int, CancellationToken, Task<bool>>? _askReceiver;
    private ImmutableHashSet<int> _receivers;
    private readonly SemaphoreSlim _asking = new(1, 1);
    private readonly TimeProvider _time;
    private Dictionary<int, int>? _routeMaxBytes;
    private long _lastAskTicks = long.MinValue;

    private SendAdmission(int sender, ImmutableHashSet<int> receivers, Dictionary<int, int>? routeMaxBytes, Func<CancellationToken, Task<IReadOnlyList<Route>?>>? askRoutes,
        Func<int, CancellationToken, Task<bool>>? askReceiver, TimeProvider time)
    {
        _sender = sender;
        _receivers = receivers;
        _routeMaxBytes = routeMaxBytes;
        _askRoutes = askRoutes;
        _askReceiver = askReceiver;
        _time = time;
    }

    /// <summary>
    /// The view from <paramref name="config"/>. <paramref name="askRoutes"/> asks the running deployment for the sender's
    /// routes now (answering null when a rule set decides); <paramref name="askReceiver"/> whether a receiver is enrolled
    /// now. Neither is called when null; both throw <see cref="ConnectUnconfirmedException"/> when f+1 do not answer alike.
    /// </summary>
    public static SendAdmission For(SieveQClientConfiguration config, int sender, Func<CancellationToken, Task<IReadOnlyList<Route>?>>? askRoutes = null,
        Func<int, CancellationToken, Task<bool>>? askReceiver = null, TimeProvider? time = null)
    {
        var receivers = config.Enrolment.Receivers.Select(r => r.Id).ToImmutableHashSet();
        return new SendAdmission(sender, receivers, ByReceiver(config.Routes, sender), askRoutes, askReceiver, time ?? TimeProvider.System);
    }

    /// <summary>The routes the sender believes now (null: a rule set decides), for tests and diagnostics.</summary>
    public IReadOnlyDictionary<int, int>? Routes => Volatile.Read(ref _routeMaxBytes);

    /// <exception cref="SendRefusedException">The deployment would refuse the message; says which enrolment, route or limit.</exception>
    public async ValueTask CheckAsync(int receiver, int dataBytes, CancellationToken ct)
    {
        var refusal = Judge(receiver, dataBytes);
        if (refusal is null)
        {
            return;
        }
        if (refusal.Reason is SendRefusal.ReceiverNotEnrolled or SendRefusal.NoRoute or SendRefusal.TooLarge
            && await RefreshAsync(refusal.Reason == SendRefusal.ReceiverNotEnrolled ? receiver : null, ct).ConfigureAwait(false))
        {
            refusal = Judge(receiver, dataBytes);
        }
        if (refusal is not null)
        {
            throw refusal;
        }
    }

    private SendRefusedException? Judge(int receiver, int dataBytes)
    {
        var receivers = Volatile.Read(ref _receivers);
        if (!receivers.Contains(receiver))
        {
            return new SendRefusedException(SendRefusal.ReceiverNotEnrolled, _sender, receiver,
                $"receiver {receiver} is not enrolled in this deployment (enrolled: {string.Join(", ", receivers.Order())}); an administrator enrols one with `sieveq enrol receiver`");
        }
        if (Volatile.Read(ref _routeMaxBytes) is not { } routes)
        {
            return null;
        }
        if (!routes.TryGetValue(receiver, out var max))
        {
            return new SendRefusedException(SendRefusal.NoRoute, _sender, receiver,
                $"the deployment has no route from sender {_sender} to receiver {receiver}; an administrator adds one with `sieveq route allow`");
        }
        var limit = Math.Min(max, EnvelopeLimits.MaxDataBytes);
        return dataBytes > limit
            ? new SendRefusedException(SendRefusal.TooLarge, _sender, receiver,
                $"{dataBytes} bytes of data are above the {limit} bytes the route from sender {_sender} to receiver {receiver} admits", limit)
            : null;
    }

    /// <summary>True when the deployment answered and its view replaced this one; <paramref name="unknownReceiver"/> is asked about first.</summary>
    private async Task<bool> RefreshAsync(int? unknownReceiver, CancellationToken ct)
    {
        if (_askRoutes is null || (unknownReceiver is not null && _askReceiver is null))
        {
            return false;
        }
        await _asking.WaitAsync(ct).ConfigureAwait(false);
        try
        {
            var now = _time.GetTimestamp();
            if (_lastAskTicks != long.MinValue && _time.GetElapsedTime(_lastAskTicks, now) < RefreshInterval)
            {
                return false;
            }
            _lastAskTicks = now;
            IReadOnlyList<Route>? routes;
            try
            {
                if (unknownReceiver is { } r)
                {
                    if (!await _askReceiver!(r, ct).ConfigureAwait(false))
                    {
                        return false;
                    }
                    // Enrolled since the view was made: its route most likely came with it.
                    ImmutableInterlocked.Update(ref _receivers, set => set.Add(r));
                }
                routes = await _askRoutes(ct).ConfigureAwait(false);
            }
            catch (ConnectUnconfirmedException)
            {
                return false;
            }
            Volatile.Write(ref _routeMaxBytes, ByReceiver(routes, _sender));
            return true;
        }
        finally
        {
            _asking.Release();
        }
    }

    private static Dictionary<int, int>? ByReceiver(IEnumerable<Route>? routes, int sender) =>
        routes?.Where(r => r.Sender == sender).GroupBy(r => r.Receiver).ToDictionary(g => g.Key, g => g.Max(r => r.MaxBytes));
}
