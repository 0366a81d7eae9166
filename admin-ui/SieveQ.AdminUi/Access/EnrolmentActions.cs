using System.Globalization;
using System.Security.Claims;
using Google.Protobuf;
using Microsoft.AspNetCore.Authorization;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;
using SieveQ.Protocol.V1;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// Enrolment and revocation of senders, for the senders page and the form endpoints alike: the operator policy is
/// checked here, on the server, for the user making the request. An enrolment takes the request `sieveq enrol request`
/// writes on the sender's host (name, both public keys, proof of possession), checked here as the replicas will check
/// it, so a malformed one never reaches the controller. The controller checks again, audits and orders it.
/// </summary>
public sealed class EnrolmentActions(IAuthorizationService authorization, IControllerGateway controller, ConsoleMetrics metrics, ILogger<EnrolmentActions> log)
{
    /// <summary>The request file's own bound (<see cref="SenderEnrolmentRequest.MaxFileBytes"/>).</summary>
    public const int MaxRequestCharacters = SenderEnrolmentRequest.MaxFileBytes;

    public async Task<ActionResult> EnrolAsync(ClaimsPrincipal user, string? requestJson, string? senderId, string? reason, CancellationToken ct)
    {
        if (await RefusedAsync(user, "enrol-sender").ConfigureAwait(false) is { } refused)
        {
            return refused;
        }
        var id = 0u;
        if (!string.IsNullOrWhiteSpace(senderId)
            && (!uint.TryParse(senderId.Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out id) || id is 0 or > int.MaxValue))
        {
            return Invalid("enrol-sender", $"the sender id is a whole number from 1 to {int.MaxValue}, or empty for the next free id");
        }
        if (ReasonProblem(user, reason, required: false) is { } reasonProblem)
        {
            return Invalid("enrol-sender", reasonProblem);
        }
        SenderEnrolmentRequest request;
        try
        {
            request = SenderEnrolmentRequest.Parse(requestJson ?? "", "the enrolment request");
        }
        catch (DeploymentException e)
        {
            return Invalid("enrol-sender", e.Message);
        }
        var body = new EnrolSenderRequest
        {
            Sender = id,
            Name = request.Name,
            SignaturePublicKey = ByteString.CopyFrom(request.SignaturePublicKey),
            AgreementPublicKey = ByteString.CopyFrom(request.AgreementPublicKey),
            Proof = ByteString.CopyFrom(request.Proof),
            Reason = Attributed(user, reason),
        };
        var label = id == 0 ? $"sender '{request.Name}' (next free id)" : $"sender '{request.Name}' as {id}";
        return await SendAsync("enrol-sender", "enrolment of " + label, () => controller.EnrolSenderAsync(body, ct)).ConfigureAwait(false);
    }

    public async Task<ActionResult> RevokeAsync(ClaimsPrincipal user, uint sender, string? reason, CancellationToken ct)
    {
        if (await RefusedAsync(user, "revoke-sender").ConfigureAwait(false) is { } refused)
        {
            return refused;
        }
        if (sender is 0 or > int.MaxValue)
        {
            return Invalid("revoke-sender", $"the sender id is a whole number from 1 to {int.MaxValue}");
        }
        if (ReasonProblem(user, reason, required: true) is { } reasonProblem)
        {
            return Invalid("revoke-sender", reasonProblem);
        }
        return await SendAsync("revoke-sender", $"revocation of sender {sender}", () => controller.RevokeSenderAsync(sender, Attributed(user, reason), ct)).ConfigureAwait(false);
    }

    private async Task<ActionResult?> RefusedAsync(ClaimsPrincipal user, string action)
    {
        if ((await authorization.AuthorizeAsync(user, ConsolePolicies.Operator).ConfigureAwait(false)).Succeeded)
        {
            return null;
        }
        metrics.Actions.Add(1, new("action", action), new("outcome", "refused_role"));
        log.LogWarning("{User} refused: {Action} needs the operator role", ConsoleCaller.Of(user), action);
        return new ActionResult(false, true, $"refused: {action} needs the operator role");
    }

    private ActionResult Invalid(string action, string why)
    {
        metrics.Actions.Add(1, new("action", action), new("outcome", "invalid"));
        return new ActionResult(false, false, "not sent: " + why);
    }

    /// <summary>A revocation is for good, so it needs a reason; an enrolment may go without.</summary>
    private static string? ReasonProblem(ClaimsPrincipal user, string? reason, bool required)
    {
        reason = (reason ?? "").Trim();
        if (required && reason.Length == 0)
        {
            return "a revocation needs a reason (it is permanent: the id is never enrolled again)";
        }
        return AttributedReason.Problem(AttributedReason.UserOf(user), reason);
    }

    private static string Attributed(ClaimsPrincipal user, string? reason) => AttributedReason.Of(AttributedReason.UserOf(user), (reason ?? "").Trim());

    private async Task<ActionResult> SendAsync(string action, string what, Func<Task<ManagementActionReply>> call)
    {
        try
        {
            var reply = await call().ConfigureAwait(false);
            metrics.Actions.Add(1, new("action", action), new("outcome", "sent"));
            return new ActionResult(true, false, $"{what} recorded in the audit log (record {reply.AuditSequence}); {(reply.Applied ? "applied: " : "")}{reply.Status}", reply.AuditSequence);
        }
        catch (Exception e) when (e is not OperationCanceledException and not OutOfMemoryException)
        {
            metrics.Actions.Add(1, new("action", action), new("outcome", "failed"));
            log.LogWarning("{Action} failed at the controller: {Error}", action, e.Message);
            return new ActionResult(false, false, $"the controller refused or did not answer: {e.Message}");
        }
    }
}
