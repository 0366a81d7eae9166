using SieveQ.AdminUi.AlarmDelivery;
using SieveQ.AdminUi.Figures;

namespace SieveQ.AdminUi.Tests;

/// <summary>Which notices the book's refreshes call for: once per change of an alarm, reminders on the clock, stable ids.</summary>
public sealed class AlarmNoticeTrackerTests
{
    private static readonly DateTimeOffset T0 = new(2026, 11, 27, 6, 0, 0, TimeSpan.Zero);
    private static readonly Alarm Down = new("component/pre-sq/pre-sq-4", "DOWN", "pre-sq pre-sq-4 is DOWN: connection refused", T0);
    private static readonly Alarm Lag = new("lag/replica-sq-2", "replica lag", "replica-sq-2 is 100 decided instances behind", T0);
    private static readonly AlarmAcknowledgement Olga = new("olga", T0.AddMinutes(5), "restarting the host", 17);

    private static IEnumerable<(AlarmNoticeState, string)> Of(IReadOnlyList<AlarmNotice> notices) => notices.Select(n => (n.State, n.Alarm.Key));

    [Fact]
    public void Raise_acknowledge_and_clear_are_each_announced_once_however_often_the_book_refreshes()
    {
        var tracker = new AlarmNoticeTracker(new AlarmDeliveryConfig { ReminderMinutes = 0 }, "c");
        Assert.Equal([(AlarmNoticeState.Raised, Down.Key), (AlarmNoticeState.Raised, Lag.Key)], Of(tracker.Observe([Down, Lag], T0)));
        Assert.Empty(tracker.Observe([Down, Lag], T0.AddSeconds(2)));
        Assert.Empty(tracker.Observe([Down, Lag], T0.AddHours(5)));
        var acknowledged = tracker.Observe([Down with { Acknowledged = Olga }, Lag], T0.AddHours(5));
        var ack = Assert.Single(acknowledged);
        Assert.Equal((AlarmNoticeState.Acknowledged, Down.Key, "olga"), (ack.State, ack.Alarm.Key, ack.Alarm.Acknowledged!.By));
        Assert.Empty(tracker.Observe([Down with { Acknowledged = Olga }, Lag], T0.AddHours(6)));
        var cleared = tracker.Observe([Lag], T0.AddHours(7));
        Assert.Equal([(AlarmNoticeState.Cleared, Down.Key)], Of(cleared));
        // The cleared notice tells who had taken it on.
        Assert.Equal("olga", cleared[0].Alarm.Acknowledged!.By);
        Assert.Empty(tracker.Observe([Lag], T0.AddHours(8)));
        // Back again later: a new alarm (new first-seen time), announced again with a new id.
        var again = tracker.Observe([Lag, Down with { Since = T0.AddHours(9) }], T0.AddHours(9));
        Assert.Equal([(AlarmNoticeState.Raised, Down.Key)], Of(again));
    }

    [Fact]
    public void Acknowledgements_are_not_sent_when_configured_off()
    {
        var tracker = new AlarmNoticeTracker(new AlarmDeliveryConfig { SendOnAcknowledge = false, ReminderMinutes = 0 }, "c");
        tracker.Observe([Down], T0);
        Assert.Empty(tracker.Observe([Down with { Acknowledged = Olga }], T0.AddMinutes(5)));
        Assert.Equal([(AlarmNoticeState.Cleared, Down.Key)], Of(tracker.Observe([], T0.AddMinutes(6))));
    }

    [Fact]
    public void An_open_unacknowledged_alarm_is_reminded_of_each_interval_an_acknowledged_one_only_when_configured()
    {
        var tracker = new AlarmNoticeTracker(new AlarmDeliveryConfig { ReminderMinutes = 30 }, "c");
        tracker.Observe([Down, Lag], T0);
        Assert.Empty(tracker.Observe([Down, Lag], T0.AddMinutes(29)));
        var first = tracker.Observe([Down, Lag with { Acknowledged = Olga }], T0.AddMinutes(30));
        // Lag is acknowledged now (that notice, no reminder); Down is reminded of.
        Assert.Equal([(AlarmNoticeState.Reminder, Down.Key), (AlarmNoticeState.Acknowledged, Lag.Key)], Of(first));
        Assert.Empty(tracker.Observe([Down, Lag with { Acknowledged = Olga }], T0.AddMinutes(45)));
        var second = tracker.Observe([Down, Lag with { Acknowledged = Olga }], T0.AddMinutes(61));
        Assert.Equal([(AlarmNoticeState.Reminder, Down.Key)], Of(second));
        Assert.NotEqual(first.Single(n => n.State == AlarmNoticeState.Reminder).EventId, second[0].EventId);

        var remindAll = new AlarmNoticeTracker(new AlarmDeliveryConfig { ReminderMinutes = 30, RemindAcknowledged = true }, "c");
        remindAll.Observe([Lag with { Acknowledged = Olga }], T0);
        Assert.Equal([(AlarmNoticeState.Reminder, Lag.Key)], Of(remindAll.Observe([Lag with { Acknowledged = Olga }], T0.AddMinutes(30))));
    }

    [Fact]
    public void Event_ids_are_the_same_for_the_same_change_seen_by_a_restarted_console_and_differ_otherwise()
    {
        var config = new AlarmDeliveryConfig { ReminderMinutes = 30 };
        var before = new AlarmNoticeTracker(config, "console-a").Observe([Down], T0.AddMinutes(3));
        var restarted = new AlarmNoticeTracker(config, "console-a").Observe([Down], T0.AddMinutes(7));
        Assert.Equal(before[0].EventId, restarted[0].EventId);
        Assert.NotEqual(before[0].EventId, new AlarmNoticeTracker(config, "console-b").Observe([Down], T0)[0].EventId);
        Assert.NotEqual(before[0].EventId, new AlarmNoticeTracker(config, "console-a").Observe([Down with { Since = T0.AddSeconds(1) }], T0)[0].EventId);
        var cleared = new AlarmNoticeTracker(config, "console-a");
        cleared.Observe([Down], T0);
        Assert.NotEqual(before[0].EventId, cleared.Observe([], T0)[0].EventId);
        Assert.Matches("^[0-9a-f]{32}$", before[0].EventId);
        Assert.NotEqual(AlarmNotice.Test("admin", T0, "c").EventId, AlarmNotice.Test("admin", T0, "c").EventId);
    }
}
