using System.Text.Json;
using System.Text.Json.Serialization;

namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>
/// The JSON a webhook receives (docs/console.md, "Alarm delivery"): a flat document, version 1, so a receiver needs no
/// SieveQ library to read it. Times are ISO 8601 UTC.
/// </summary>
public sealed record AlarmNoticeDocument(
    int Version,
    string EventId,
    string State,
    string AlarmKey,
    string Kind,
    string Severity,
    string Title,
    string Detail,
    string? Component,
    DateTimeOffset FirstSeen,
    DateTimeOffset At,
    string Console,
    AlarmNoticeAcknowledgement? Acknowledgement)
{
    public const int CurrentVersion = 1;

    private static readonly JsonSerializerOptions Options = new()
    {
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        DefaultIgnoreCondition = JsonIgnoreCondition.Never,
    };

    public static AlarmNoticeDocument Of(AlarmNotice notice)
    {
        ArgumentNullException.ThrowIfNull(notice);
        var a = notice.Alarm;
        return new AlarmNoticeDocument(CurrentVersion, notice.EventId, StateName(notice.State), a.Key, a.Kind, notice.Severity, notice.Title, a.Message,
            notice.Component, a.Since.ToUniversalTime(), notice.At.ToUniversalTime(), notice.Console,
            a.Acknowledged is { } ack ? new AlarmNoticeAcknowledgement(ack.By, ack.At.ToUniversalTime(), ack.Reason, ack.AuditSequence) : null);
    }

    public static byte[] Serialize(AlarmNotice notice) => JsonSerializer.SerializeToUtf8Bytes(Of(notice), Options);

    public static AlarmNoticeDocument? Parse(ReadOnlySpan<byte> json) => JsonSerializer.Deserialize<AlarmNoticeDocument>(json, Options);

    /// <summary>raised, acknowledged, cleared, reminder or test.</summary>
    public static string StateName(AlarmNoticeState state) => state.ToString().ToLowerInvariant();
}

/// <summary>Who took the alarm on, as the controller's audit log recorded it.</summary>
public sealed record AlarmNoticeAcknowledgement(string By, DateTimeOffset At, string Reason, long AuditSequence);
