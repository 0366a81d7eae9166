namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>
/// One way out for alarm notices (a webhook, e-mail). <see cref="SendAsync"/> makes one try: the queue in front of it
/// (<see cref="AlarmChannelQueue"/>) owns retries, back-off, rate and the try's time limit, so a channel only talks
/// its protocol.
/// </summary>
public interface IAlarmChannel
{
    /// <summary>The channel in metrics (tag <c>channel</c>) and logs: <c>webhook:NAME</c>, <c>mail</c>.</summary>
    string Name { get; }

    /// <exception cref="AlarmNoticeRefusedException">The receiver refused this notice for good: another try would be refused too.</exception>
    /// <remarks>Any other exception is a failed try that may succeed later.</remarks>
    Task SendAsync(AlarmNotice notice, CancellationToken ct);
}

/// <summary>A receiver's answer that a retry cannot change (a 4xx other than 408 and 429, an SMTP 5xx): the notice is counted failed at once.</summary>
public sealed class AlarmNoticeRefusedException(string message) : Exception(message);
