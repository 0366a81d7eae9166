using System.Security.Claims;
using Microsoft.AspNetCore.Authorization;
using SieveQ.AdminUi.AlarmDelivery;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// An administrator sends a test alarm to every configured channel, to see that webhooks and e-mail arrive before a
/// real alarm needs them. The administrator policy is checked here, on the server; the controller records it in the
/// audit log first (like an acknowledgement), so a receiver's test notice can always be traced to who sent it.
/// </summary>
public sealed class AlarmTestAction(IAuthorizationService authorization, IControllerGateway controller, AlarmDispatch dispatch,
    ConsoleMetrics metrics, ILogger<AlarmTestAction> log)
{
    /// <summary>The audit action, one of those the controller records for the console (ConsoleChangeRequest).</summary>
    public const string AuditAction = "console-send-test-alarm";

    public async Task<ActionResult> SendAsync(ClaimsPrincipal user, CancellationToken ct)
    {
        var allowed = await authorization.AuthorizeAsync(user, ConsolePolicies.Administrator).ConfigureAwait(false);
        var name = AttributedReason.UserOf(user);
        if (!allowed.Succeeded)
        {
            Count("refused_role");
            log.LogWarning("{User} refused: sending a test alarm needs the administrator role", name);
            return new ActionResult(false, true, "refused: sending a test alarm needs the administrator role");
        }
        if (dispatch.Queues.Count == 0)
        {
            Count("invalid");
            return new ActionResult(false, false, "not sent: no alarm channel is configured (console.json, alarmDelivery)");
        }
        var channels = string.Join(", ", dispatch.Queues.Select(q => q.Name));
        if (channels.Length > 200)
        {
            channels = $"{dispatch.Queues.Count} channels";
        }
        long sequence;
        try
        {
            sequence = (await controller.RecordConsoleChangeAsync(AuditAction, channels, AttributedReason.Of(name, "test alarm"), ct).ConfigureAwait(false)).AuditSequence;
        }
        catch (Exception e) when (e is not OperationCanceledException and not OutOfMemoryException)
        {
            Count("failed");
            log.LogWarning("a test alarm was not sent: the controller did not record it: {Error}", e.Message);
            return new ActionResult(false, false, $"not sent: the controller did not record it in its audit log ({e.Message})");
        }
        dispatch.SendTest(name.Name);
        Count("sent");
        return new ActionResult(true, false, $"test alarm queued for {channels}; recorded in the audit log (record {sequence}); the channels' figures show whether it arrived", sequence);
    }

    private void Count(string outcome) => metrics.Actions.Add(1, new("action", "send-test-alarm"), new("outcome", outcome));
}
