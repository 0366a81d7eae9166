using System.Security.Claims;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.Mvc;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// Sign-in and sign-out as plain form posts (the cookie must be set on an HTTP response, not over a circuit), and
/// the senders', pre-SQs' and rule sets' change endpoints and the password change for scripts and direct posts. Form endpoints validate the antiforgery token
/// (UseAntiforgery); the change endpoints also require the operator policy, and a pre-SQ's start, stop and replace the
/// administrator policy.
/// </summary>
public static class AccountEndpoints
{
    public const string LoginPath = "/account/login";

    public static void MapAccountEndpoints(this IEndpointRouteBuilder routes)
    {
        routes.MapPost(LoginPath, LoginAsync).AllowAnonymous();
        routes.MapPost("/account/logout", async (HttpContext context, ConsoleConfig config) =>
            await OidcSignOut.SignOutAsync(context, config.Oidc).ConfigureAwait(false) ? Results.Empty : Results.LocalRedirect(LoginPath));
        routes.MapPost("/api/senders/{sender}/quarantine", (uint sender, [FromForm] string? reason, HttpContext context, PartyActions actions) =>
            ChangeAsync(actions.QuarantineSenderAsync(context.User, sender, reason, context.RequestAborted)))
            .RequireAuthorization(ConsolePolicies.Operator);
        routes.MapPost("/api/senders/{sender}/readmit", (uint sender, [FromForm] string? reason, HttpContext context, PartyActions actions) =>
            ChangeAsync(actions.ReadmitSenderAsync(context.User, sender, reason, context.RequestAborted)))
            .RequireAuthorization(ConsolePolicies.Operator);
        routes.MapPost("/api/senders/enrol", ([FromForm] string? request, [FromForm] string? id, [FromForm] string? reason, HttpContext context, EnrolmentActions actions) =>
            ChangeAsync(actions.EnrolAsync(context.User, request, id, reason, context.RequestAborted)))
            .RequireAuthorization(ConsolePolicies.Operator);
        routes.MapPost("/api/senders/{sender}/revoke", (uint sender, [FromForm] string? reason, HttpContext context, EnrolmentActions actions) =>
            ChangeAsync(actions.RevokeAsync(context.User, sender, reason, context.RequestAborted)))
            .RequireAuthorization(ConsolePolicies.Operator);
        routes.MapPost("/api/receivers/enrol", ([FromForm] string? request, [FromForm] string? id, [FromForm] string? reason, HttpContext context, EnrolmentActions actions) =>
            ChangeAsync(actions.EnrolReceiverAsync(context.User, request, id, reason, context.RequestAborted)))
            .RequireAuthorization(ConsolePolicies.Operator);
        routes.MapPost("/api/receivers/{receiver}/revoke", (uint receiver, [FromForm] string? reason, HttpContext context, EnrolmentActions actions) =>
            ChangeAsync(actions.RevokeReceiverAsync(context.User, receiver, reason, context.RequestAborted)))
            .RequireAuthorization(ConsolePolicies.Operator);
        routes.MapPost("/api/alarms/acknowledge", ([FromForm] string? key, [FromForm] string? reason, HttpContext context, AlarmActions actions) =>
            ChangeAsync(actions.AcknowledgeAsync(context.User, key, reason, context.RequestAborted)))
            .RequireAuthorization(ConsolePolicies.Operator);
        routes.MapPost("/api/pre-sqs/{preSq}/quarantine", (uint preSq, [FromForm] string? reason, HttpContext context, PartyActions actions) =>
            ChangeAsync(actions.QuarantinePreSqAsync(context.User, preSq, reason, context.RequestAborted)))
            .RequireAuthorization(ConsolePolicies.Operator);
        routes.MapPost("/api/pre-sqs/{preSq}/readmit", (uint preSq, [FromForm] string? reason, HttpContext context, PartyActions actions) =>
            ChangeAsync(actions.ReadmitPreSqAsync(context.User, preSq, reason, context.RequestAborted)))
            .RequireAuthorization(ConsolePolicies.Operator);
        // Start, stop and replace act on processes: the administrator role, as on the page (whose confirmation step is
        // the page's; a script that posts has decided).
        foreach (var (verb, act) in PreSqProcessActions)
        {
            routes.MapPost($"/api/pre-sqs/{{preSq}}/{verb}", (uint preSq, [FromForm] string? reason, HttpContext context, PartyActions actions) =>
                ChangeAsync(act(actions, context.User, preSq, reason, context.RequestAborted)))
                .RequireAuthorization(ConsolePolicies.Administrator);
        }
        routes.MapPost("/api/replicas/{replica}/recover", (uint replica, [FromForm] string? reason, HttpContext context, PartyActions actions) =>
            ChangeAsync(actions.RecoverReplicaAsync(context.User, replica, reason, context.RequestAborted)))
            .RequireAuthorization(ConsolePolicies.Administrator);
        routes.MapPost("/api/replicas/recover-round", ([FromForm] string? reason, HttpContext context, PartyActions actions) =>
            ChangeAsync(actions.RecoverReplicasAsync(context.User, reason, context.RequestAborted)))
            .RequireAuthorization(ConsolePolicies.Administrator);
        routes.MapPost("/api/rule-sets/push", async (IFormFile? document, IFormFile? signature, [FromForm] string? reason, HttpContext context, RuleSetChanges.RuleSetActions actions) =>
        {
            var json = await ReadCappedAsync(document, RuleSetChanges.RuleSetActions.MaxDocumentBytes, context.RequestAborted).ConfigureAwait(false);
            var sig = await ReadCappedAsync(signature, RuleSetChanges.RuleSetActions.MaxSignatureBytes, context.RequestAborted).ConfigureAwait(false);
            return await ChangeAsync(actions.PushAsync(context.User, json, sig, reason, context.RequestAborted)).ConfigureAwait(false);
        }).RequireAuthorization(ConsolePolicies.Operator).WithMetadata(new RequestSizeLimitAttribute(RuleSetChanges.RuleSetActions.MaxDocumentBytes + 64 * 1024));
        routes.MapPost("/api/rule-sets/rollback", ([FromForm] string? reason, HttpContext context, RuleSetChanges.RuleSetActions actions) =>
            ChangeAsync(actions.RollbackAsync(context.User, reason, context.RequestAborted)))
            .RequireAuthorization(ConsolePolicies.Operator);
        routes.MapPost("/api/account/password", async ([FromForm] string? current, [FromForm] string? password, [FromForm] string? confirmation,
            HttpContext context, AccountActions accounts) =>
        {
            var result = await accounts.ChangeOwnPasswordAsync(context.User, current, password, confirmation, context.RequestAborted).ConfigureAwait(false);
            return result.Refused ? Results.Json(result, statusCode: StatusCodes.Status403Forbidden) : result.Done ? Results.Ok(result) : Results.BadRequest(result);
        }).RequireAuthorization(ConsolePolicies.Viewer);
        routes.MapGet("/healthz", () => Results.Text("ok")).AllowAnonymous();
    }

    private static readonly (string Verb, Func<PartyActions, ClaimsPrincipal, uint, string?, CancellationToken, Task<ActionResult>> Act)[] PreSqProcessActions =
    [
        ("start", (a, user, id, reason, ct) => a.StartPreSqAsync(user, id, reason, ct)),
        ("stop", (a, user, id, reason, ct) => a.StopPreSqAsync(user, id, reason, ct)),
        ("replace", (a, user, id, reason, ct) => a.ReplacePreSqAsync(user, id, reason, ct)),
    ];

    /// <summary>An uploaded file's bytes; one over <paramref name="cap"/> is read only up to one byte past it, for the refusal to name.</summary>
    private static async Task<byte[]> ReadCappedAsync(IFormFile? file, int cap, CancellationToken ct)
    {
        if (file is null)
        {
            return [];
        }
        using var buffer = new MemoryStream();
        await using var stream = file.OpenReadStream();
        var chunk = new byte[16 * 1024];
        int read;
        while (buffer.Length <= cap && (read = await stream.ReadAsync(chunk, ct).ConfigureAwait(false)) > 0)
        {
            buffer.Write(chunk, 0, read);
        }
        return buffer.ToArray();
    }

    private static async Task<IResult> ChangeAsync(Task<ActionResult> action)
    {
        var result = await action.ConfigureAwait(false);
        return result.Refused ? Results.Forbid() : result.Sent ? Results.Ok(result) : Results.BadRequest(result);
    }

    private static async Task<IResult> LoginAsync([FromForm] string? username, [FromForm] string? password, [FromForm] string? returnUrl,
        HttpContext context, ConsoleUserStore users, ConsoleMetrics metrics, ConsoleConfig config, ILogger<ConsoleUserStore> log)
    {
        username ??= "";
        password ??= "";
        if (!ConsoleUserStore.IsValidName(username) || password.Length is 0 or > 256)
        {
            metrics.Logins.Add(1, new KeyValuePair<string, object?>("outcome", "refused"));
            return Results.LocalRedirect(LoginPath + "?error=1");
        }
        var (outcome, user) = await users.CheckAsync(username, password, context.RequestAborted).ConfigureAwait(false);
        metrics.Logins.Add(1, new KeyValuePair<string, object?>("outcome", outcome switch
        {
            LoginOutcome.Accepted => "accepted",
            LoginOutcome.LockedOut => "locked_out",
            _ => "refused",
        }));
        if (outcome != LoginOutcome.Accepted || user is null)
        {
            log.LogWarning("console login refused for {User} from {Address}: {Outcome}", username, context.Connection.RemoteIpAddress, outcome);
            // One message for every refusal: a caller cannot tell a wrong name from a wrong password or a locked account.
            return Results.LocalRedirect(LoginPath + "?error=1");
        }
        var identity = new ClaimsIdentity(
            [new Claim(ClaimTypes.Name, user.Name), new Claim(ClaimTypes.Role, ConsolePolicies.RoleName(user.Role)),
                new Claim(SessionStanding.PasswordStampType, SessionStanding.PasswordStampOf(user)), new Claim(SessionStanding.SessionIdType, SessionStanding.NewSessionId())],
            CookieAuthenticationDefaults.AuthenticationScheme);
        await context.SignInAsync(CookieAuthenticationDefaults.AuthenticationScheme, new ClaimsPrincipal(identity),
            new AuthenticationProperties { IsPersistent = false, ExpiresUtc = DateTimeOffset.UtcNow.AddMinutes(config.SessionMinutes) }).ConfigureAwait(false);
        log.LogInformation("console login: {User} ({Role}) from {Address}", user.Name, user.Role, context.Connection.RemoteIpAddress);
        return Results.LocalRedirect(returnUrl is { Length: > 0 } r && r.StartsWith('/') && !r.StartsWith("//", StringComparison.Ordinal) && !r.StartsWith("/\\", StringComparison.Ordinal) ? r : "/");
    }
}
