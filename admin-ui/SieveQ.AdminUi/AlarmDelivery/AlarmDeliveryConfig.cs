using System.Diagnostics.CodeAnalysis;
using System.Text.RegularExpressions;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>What a channel's queue does with a new notice when it is full.</summary>
public enum AlarmQueueFullPolicy
{
    /// <summary>The oldest waiting notice goes: the newest state of the deployment is what an operator needs.</summary>
    DropOldest,
    /// <summary>The new notice goes: what is queued keeps its order.</summary>
    DropNewest,
}

/// <summary>
/// console.json's <c>alarmDelivery</c>: where alarms are sent besides the /alarms page (webhooks, e-mail), when, and
/// the bounds every channel works within. Absent: alarms are only shown. The secrets (webhook keys, the SMTP password)
/// are in files of their own, read at start (<see cref="AlarmDeliverySetup"/>), never in console.json.
/// </summary>
public sealed partial record AlarmDeliveryConfig
{
    public const int MaxWebhooks = 16;

    /// <summary>Names this console in every notice (<c>console</c>); default: the host's name.</summary>
    public string? Instance { get; init; }
    /// <summary>Send a notice when an operator acknowledges an alarm (raise and clear are always sent).</summary>
    public bool SendOnAcknowledge { get; init; } = true;
    /// <summary>Remind of an alarm still open and unacknowledged this long after its last notice; 0: no reminders.</summary>
    public int ReminderMinutes { get; init; } = 60;
    /// <summary>Remind of acknowledged alarms too (off: an acknowledged alarm has someone on it).</summary>
    public bool RemindAcknowledged { get; init; }
    /// <summary>Notices waiting per channel; beyond it <see cref="WhenQueueFull"/> decides which one is dropped (counted).</summary>
    public int QueueCapacity { get; init; } = 100;
    public AlarmQueueFullPolicy WhenQueueFull { get; init; } = AlarmQueueFullPolicy.DropOldest;
    /// <summary>Tries per notice and channel, the first included; then the notice is counted as failed.</summary>
    public int MaxAttempts { get; init; } = 5;
    /// <summary>The wait before the second try; doubled for each further one (at most <see cref="MaxRetryDelay"/>), with jitter.</summary>
    public int RetryFirstDelaySeconds { get; init; } = 2;
    /// <summary>One try's bound: connecting, sending and the answer.</summary>
    public int RequestTimeoutSeconds { get; init; } = 10;
    /// <summary>Notices a channel sends per minute at most; the rest wait in its queue.</summary>
    public int MaxPerMinute { get; init; } = 30;
    public IReadOnlyList<AlarmWebhookConfig> Webhooks { get; init; } = [];
    public AlarmMailConfig? Mail { get; init; }

    /// <summary>The longest wait between two tries, whatever the doubling reached.</summary>
    public static readonly TimeSpan MaxRetryDelay = TimeSpan.FromMinutes(5);

    /// <exception cref="DeploymentException">A value is malformed or out of its range; the message says which.</exception>
    public void Check(string where)
    {
        [DoesNotReturn]
        void Refuse(string what) => throw new DeploymentException($"{where}: alarmDelivery: {what}");
        if (Instance is not null && !ConfigText.IsText(Instance, 100))
        {
            Refuse("instance must be 1 to 100 characters without control characters");
        }
        if (ReminderMinutes is < 0 or > 7 * 24 * 60)
        {
            Refuse("reminderMinutes must be 0 (no reminders) to 10080");
        }
        if (QueueCapacity is < 1 or > 10_000 || MaxAttempts is < 1 or > 20 || RetryFirstDelaySeconds is < 1 or > 600
            || RequestTimeoutSeconds is < 1 or > 300 || MaxPerMinute is < 1 or > 600)
        {
            Refuse("queueCapacity 1..10000, maxAttempts 1..20, retryFirstDelaySeconds 1..600, requestTimeoutSeconds 1..300, maxPerMinute 1..600");
        }
        if (!Enum.IsDefined(WhenQueueFull))
        {
            Refuse("whenQueueFull must be dropOldest or dropNewest");
        }
        if (Webhooks is null || Webhooks.Count > MaxWebhooks)
        {
            Refuse($"webhooks: at most {MaxWebhooks}");
        }
        var names = new HashSet<string>(StringComparer.Ordinal);
        foreach (var w in Webhooks)
        {
            if (w is null)
            {
                Refuse("webhooks: an entry is null");
            }
            w.Check(Refuse);
            if (!names.Add(w.Name))
            {
                Refuse($"webhooks: the name '{w.Name}' is used twice");
            }
        }
        Mail?.Check(Refuse);
    }

    /// <summary>A channel's name in metrics and logs.</summary>
    [GeneratedRegex("^[A-Za-z0-9._-]{1,64}$")]
    internal static partial Regex ChannelName();
}
