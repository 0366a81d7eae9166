using SieveQ.AdminUi.Figures;

namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>
/// Turns the alarm book's open alarms, seen again and again (every refresh), into notices: each alarm is announced
/// once when raised, once when acknowledged (if configured), once when cleared, and reminded of every
/// <see cref="AlarmDeliveryConfig.ReminderMinutes"/> while open. This per-alarm memory is the de-duplication: the
/// same open alarm at the next refresh is no news. It holds only open alarms, which the book bounds.
/// </summary>
public sealed class AlarmNoticeTracker(AlarmDeliveryConfig config, string console)
{
    private sealed class Announced(Alarm alarm, DateTimeOffset at)
    {
        public Alarm Alarm { get; set; } = alarm;
        public DateTimeOffset LastNotice { get; set; } = at;
    }

    private readonly Dictionary<string, Announced> _announced = new(StringComparer.Ordinal);
    private readonly Lock _lock = new();

    /// <summary>The notices the change from the last call to <paramref name="open"/> calls for, in the order to send them.</summary>
    public IReadOnlyList<AlarmNotice> Observe(IReadOnlyList<Alarm> open, DateTimeOffset now)
    {
        ArgumentNullException.ThrowIfNull(open);
        var notices = new List<AlarmNotice>();
        lock (_lock)
        {
            var keys = new HashSet<string>(StringComparer.Ordinal);
            foreach (var alarm in open)
            {
                keys.Add(alarm.Key);
                if (!_announced.TryGetValue(alarm.Key, out var seen))
                {
                    _announced[alarm.Key] = new Announced(alarm, now);
                    notices.Add(AlarmNotice.For(AlarmNoticeState.Raised, alarm, now, console));
                    continue;
                }
                // An acknowledgement lasts as long as the alarm is open, so the one seen before tells whether this one is new.
                var acknowledgedNow = alarm.Acknowledged is not null && seen.Alarm.Acknowledged is null;
                seen.Alarm = alarm;
                if (acknowledgedNow)
                {
                    if (config.SendOnAcknowledge)
                    {
                        seen.LastNotice = now;
                        notices.Add(AlarmNotice.For(AlarmNoticeState.Acknowledged, alarm, now, console));
                        continue;
                    }
                }
                if (Reminder(alarm, seen, now) is { } number)
                {
                    seen.LastNotice = now;
                    notices.Add(AlarmNotice.For(AlarmNoticeState.Reminder, alarm, now, console, number));
                }
            }
            foreach (var gone in _announced.Where(e => !keys.Contains(e.Key)).ToList())
            {
                _announced.Remove(gone.Key);
                notices.Add(AlarmNotice.For(AlarmNoticeState.Cleared, gone.Value.Alarm, now, console));
            }
        }
        return notices;
    }

    /// <summary>
    /// The reminder's number when one is due, else null. The number counts intervals since the alarm was first seen, so
    /// a console restarted in between gives the same reminder the same event id.
    /// </summary>
    private long? Reminder(Alarm alarm, Announced seen, DateTimeOffset now)
    {
        if (config.ReminderMinutes == 0 || alarm.Acknowledged is not null && !config.RemindAcknowledged)
        {
            return null;
        }
        var interval = TimeSpan.FromMinutes(config.ReminderMinutes);
        return now - seen.LastNotice >= interval ? Math.Max(1, (long)((now - alarm.Since) / interval)) : null;
    }
}
