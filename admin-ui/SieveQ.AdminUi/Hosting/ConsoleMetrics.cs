using System.Diagnostics.Metrics;

namespace SieveQ.AdminUi.Hosting;

/// <summary>The console's instruments (meter "SieveQ.AdminUi").</summary>
public sealed class ConsoleMetrics : IDisposable
{
    public const string MeterName = "SieveQ.AdminUi";
    private readonly Meter _meter;

    public ConsoleMetrics(IMeterFactory meters)
    {
        ArgumentNullException.ThrowIfNull(meters);
        _meter = meters.Create(MeterName);
        Logins = _meter.CreateCounter<long>("sieveq.console.logins", description: "Login attempts, by outcome (accepted, refused, locked_out; Windows sign-in, tagged method=negotiate: also refused_no_role, malformed).");
        Actions = _meter.CreateCounter<long>("sieveq.console.actions", description: "Change requests, by action and outcome (sent, refused_role, failed).");
        Polls = _meter.CreateCounter<long>("sieveq.console.status_polls", description: "Status polls of the controller, by outcome.");
        SessionsEnded = _meter.CreateCounter<long>("sieveq.console.sessions_ended",
            description: "Sessions ended because they no longer stand (account removed or disabled, role or password changed, mapping or provider changed, logged out at the provider), by where: request or page.");
        BackChannelLogouts = _meter.CreateCounter<long>("sieveq.console.backchannel_logouts",
            description: "Logout tokens the OpenID Connect provider posted, by outcome (accepted, invalid, replayed, full).");
    }

    public Counter<long> Logins { get; }
    public Counter<long> Actions { get; }
    public Counter<long> Polls { get; }
    public Counter<long> SessionsEnded { get; }
    public Counter<long> BackChannelLogouts { get; }

    public void Dispose() => _meter.Dispose();
}
