using System.Globalization;
using System.Security.Claims;
using Microsoft.AspNetCore.Authorization;
using SieveQ.AdminUi.Figures;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// An operator takes an open alarm on: the operator policy is checked here, on the server, whatever the page showed;
/// the controller records the acknowledgement in the deployment's audit log first (under the console's key, naming the
/// console user), and only then does the alarm book mark the alarm, so every acknowledgement the console shows is
/// in the audit log. The mark lasts while the condition does and survives a console restart (<see cref="AlarmJournal"/>).
/// </summary>
public sealed class AlarmActions(IAuthorizationService authorization, IControllerGateway controller, AlarmBook book, TimeProvider time,
    ConsoleMetrics metrics, ILogger<AlarmActions> log)
{
    /// <summary>The audit action, one of those the controller records for the console (ConsoleChangeRequest).</summary>
    public const string AuditAction = "console-acknowledge-alarm";

    public async Task<ActionResult> AcknowledgeAsync(ClaimsPrincipal user, string? key, string? reason, CancellationToken ct)
    {
        var allowed = await authorization.AuthorizeAsync(user, ConsolePolicies.Operator).ConfigureAwait(false);
        var name = AttributedReason.UserOf(user);
        if (!allowed.Succeeded)
        {
            Count("refused_role");
            log.LogWarning("{User} refused: acknowledging an alarm needs the operator role", name);
            return new ActionResult(false, true, "refused: acknowledging an alarm needs the operator role");
        }
        if (!AlarmJournal.IsValidKey(key) || book.Find(key!) is not { } alarm)
        {
            Count("invalid");
            return new ActionResult(false, false, "not sent: no such alarm is open (it may have cleared since the page was drawn)");
        }
        if (alarm.Acknowledged is { } earlier)
        {
            Count("invalid");
            return new ActionResult(false, false, $"not sent: {Acknowledgement(earlier)}");
        }
        reason = (reason ?? "").Trim();
        if (reason.Length == 0)
        {
            Count("invalid");
            return new ActionResult(false, false, "not sent: say what is being done about it (the reason goes to the audit log)");
        }
        if (AttributedReason.Problem(name, reason) is { } problem)
        {
            Count("invalid");
            return new ActionResult(false, false, "not sent: " + problem);
        }
        long sequence;
        try
        {
            sequence = (await controller.RecordConsoleChangeAsync(AuditAction, alarm.Key, AttributedReason.Of(name, reason), ct).ConfigureAwait(false)).AuditSequence;
        }
        catch (Exception e) when (e is not OperationCanceledException and not OutOfMemoryException)
        {
            Count("failed");
            log.LogWarning("acknowledging alarm {Key} failed at the controller: {Error}", alarm.Key, e.Message);
            return new ActionResult(false, false, $"not acknowledged: the controller did not record it in its audit log ({e.Message})");
        }
        var ack = new AlarmAcknowledgement(name.Name, time.GetUtcNow(), reason, sequence);
        if (!book.Acknowledge(alarm.Key, ack, out var now))
        {
            // Cleared, or taken on by someone else, between the check and the audit record: the record stands, and says so.
            Count("raced");
            return new ActionResult(true, false, now?.Acknowledged is { } other
                ? $"recorded in the audit log (record {sequence}), but {Acknowledgement(other)}"
                : $"recorded in the audit log (record {sequence}), but the alarm cleared meanwhile", sequence);
        }
        Count("sent");
        return new ActionResult(true, false, $"alarm acknowledged; recorded in the audit log (record {sequence})", sequence);
    }

    private void Count(string outcome) => metrics.Actions.Add(1, new("action", "acknowledge-alarm"), new("outcome", outcome));

    /// <summary>How the page and the replies say who took an alarm on.</summary>
    public static string Acknowledgement(AlarmAcknowledgement a)
    {
        ArgumentNullException.ThrowIfNull(a);
        return $"acknowledged by {a.By} at {a.At.UtcDateTime.ToString("yyyy-MM-dd HH:mm:ss", CultureInfo.InvariantCulture)} UTC: {a.Reason} (audit record {a.AuditSequence})";
    }
}
