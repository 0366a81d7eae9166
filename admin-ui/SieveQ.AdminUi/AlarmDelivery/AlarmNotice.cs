using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using SieveQ.AdminUi.Figures;

namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>What happened to an alarm that a notice tells.</summary>
public enum AlarmNoticeState
{
    Raised,
    Acknowledged,
    Cleared,
    /// <summary>Still open after the reminder interval.</summary>
    Reminder,
    /// <summary>An administrator's "send a test alarm": no condition behind it.</summary>
    Test,
}

/// <summary>
/// One message about one alarm, the same for every channel. <see cref="EventId"/> is derived from the console, the
/// alarm's key, its first-seen time and the state (and the reminder's number), not drawn at random: a notice sent
/// again after a retry or a console restart carries the same id, so a receiver can drop the copy.
/// </summary>
public sealed record AlarmNotice(string EventId, AlarmNoticeState State, Alarm Alarm, string Severity, string Title, string? Component,
    DateTimeOffset At, string Console)
{
    public static AlarmNotice For(AlarmNoticeState state, Alarm alarm, DateTimeOffset at, string console, long reminder = 0)
    {
        ArgumentNullException.ThrowIfNull(alarm);
        var discriminator = state switch
        {
            AlarmNoticeState.Acknowledged => alarm.Acknowledged?.AuditSequence.ToString(CultureInfo.InvariantCulture) ?? "",
            AlarmNoticeState.Reminder => reminder.ToString(CultureInfo.InvariantCulture),
            _ => "",
        };
        var id = EventIdOf(console, alarm.Key, alarm.Since, state, discriminator);
        return new AlarmNotice(id, state, alarm, AlarmSeverity.Of(alarm), $"{alarm.Kind}: {alarm.Key}", ComponentOf(alarm.Key), at, console);
    }

    /// <summary>A test notice: its own key and id each time, so a receiver never takes it for a copy.</summary>
    public static AlarmNotice Test(string by, DateTimeOffset at, string console)
    {
        var id = Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(16));
        var alarm = new Alarm($"test/{id}", "test", $"a test alarm sent by {by} from the console's alarms page; no condition is behind it", at);
        return new AlarmNotice(id, AlarmNoticeState.Test, alarm, AlarmSeverity.Info, $"test: sent by {by}", null, at, console);
    }

    private static string EventIdOf(string console, string key, DateTimeOffset since, AlarmNoticeState state, string discriminator)
    {
        // Fields separated by a byte no part can hold (console and key have no control characters).
        var text = string.Join('\u001f', console, key, since.ToUnixTimeMilliseconds().ToString(CultureInfo.InvariantCulture), state.ToString(), discriminator);
        return Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes(text)).AsSpan(0, 16));
    }

    /// <summary>The component a key names (<c>component/pre-sq/pre-sq-4</c>: pre-sq-4; <c>lag/replica-sq-2</c>: replica-sq-2), else null.</summary>
    internal static string? ComponentOf(string key)
    {
        var parts = key.Split('/');
        return parts switch
        {
            ["component", _, var name] => name,
            ["lag", var name] => name,
            ["quarantine", "pre-sq", var id] => $"pre-sq {id}",
            ["tls", "console-certificate"] => "console",
            _ => null,
        };
    }
}

/// <summary>How urgent an alarm's kind is, for a receiver's routing (a pager for critical, a ticket for minor).</summary>
public static class AlarmSeverity
{
    public const string Critical = "critical";
    public const string Major = "major";
    public const string Minor = "minor";
    public const string Info = "info";

    public static string Of(Alarm alarm)
    {
        ArgumentNullException.ThrowIfNull(alarm);
        return alarm.Kind switch
        {
            // A component gone or replicas deciding under different rules: the sieve itself is at risk.
            "DOWN" or "rule-set split" => Critical,
            "UNHEALTHY" or "quarantine" or "certificate" => Major,
            "test" => Info,
            _ => Minor,
        };
    }
}
