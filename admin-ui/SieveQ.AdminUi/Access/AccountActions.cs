using System.Security.Claims;
using Microsoft.AspNetCore.Authorization;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.Access;

/// <summary>What became of an account change; <see cref="Password"/> is set once, when an account was created.</summary>
public sealed record AccountResult(bool Done, bool Refused, string Message, string? Password = null);

/// <summary>
/// Changes to the console's own accounts, for the pages' handlers and the form endpoint alike: a user's own password
/// (the current one required and checked with the sign-in's lockout rules), and the administrator's account
/// management. The role is checked here for the user making the request, and the acting account must still be
/// enabled with that role in the store (a session outlives a role change by at most one request). Every change is
/// recorded in the controller's audit log before it is made; when the controller does not record it, nothing changes.
/// </summary>
public sealed class AccountActions(IAuthorizationService authorization, IControllerGateway controller, ConsoleUserStore users,
    ConsoleMetrics metrics, ILogger<AccountActions> log, Hosting.ConsoleConfig? config = null)
{
    public async Task<AccountResult> ChangeOwnPasswordAsync(ClaimsPrincipal user, string? current, string? replacement, string? confirmation, CancellationToken ct)
    {
        var name = user.Identity?.Name;
        if (name is null || !(await authorization.AuthorizeAsync(user, ConsolePolicies.Viewer).ConfigureAwait(false)).Succeeded)
        {
            return Refuse("change-password", name, "refused: sign in first");
        }
        if (OidcSignIn.IsProviderSession(user, config?.Oidc, out _))
        {
            return Refuse("change-password", name, "refused: an account of the sign-in provider changes its password there");
        }
        if (NegotiateSignIn.IsWindowsSession(user))
        {
            return Refuse("change-password", name, "refused: a Windows account changes its password in Windows");
        }
        current ??= "";
        replacement ??= "";
        if (current.Length is 0 or > PasswordRule.MaxLength)
        {
            return Invalid("change-password", "not changed: enter the current password");
        }
        if (!string.Equals(replacement, confirmation, StringComparison.Ordinal))
        {
            return Invalid("change-password", "not changed: the new password and its confirmation differ");
        }
        if (PasswordRule.Check(name, replacement) is { } why)
        {
            return Invalid("change-password", $"not changed: {why}");
        }
        if (string.Equals(current, replacement, StringComparison.Ordinal))
        {
            return Invalid("change-password", "not changed: the new password is the current one");
        }
        // The sign-in's own check: a wrong current password counts towards the lockout, and a locked account is refused.
        var (outcome, _) = await users.CheckAsync(name, current, ct).ConfigureAwait(false);
        if (outcome != LoginOutcome.Accepted)
        {
            log.LogWarning("console user {User}: password change refused, current password {Outcome}", name, outcome);
            return Refuse("change-password", name, "refused: the current password is wrong, or the account is locked after too many failures");
        }
        return await RecordThenAsync("change-password", $"{ConsoleCaller.Of(user)} changed their own password", "password replaced",
            () => users.SetPasswordAsync(name, replacement, user.FindFirst(SessionStanding.SessionIdType)?.Value, ct), "password changed", ct).ConfigureAwait(false);
    }

    public async Task<AccountResult> CreateAsync(ClaimsPrincipal user, string? account, string? role, CancellationToken ct)
    {
        if (await AdministratorAsync(user, "create-account", ct).ConfigureAwait(false) is { } refused)
        {
            return refused;
        }
        account = (account ?? "").Trim();
        if (!ConsoleUserStore.IsValidName(account))
        {
            return Invalid("create-account", "not created: a user name is 1-64 characters of letters, digits, '-', '_' or '.'");
        }
        if (ParseRole(role) is not { } parsed)
        {
            return Invalid("create-account", "not created: the role is viewer, operator or administrator");
        }
        if (await users.FindAsync(account, ct).ConfigureAwait(false) is not null)
        {
            return Invalid("create-account", $"not created: user '{account}' exists already");
        }
        if ((await users.ListAsync(ct).ConfigureAwait(false)).Count >= ConsoleUserStore.MaxUsers)
        {
            return Invalid("create-account", $"not created: at most {ConsoleUserStore.MaxUsers} accounts");
        }
        string? password = null;
        var result = await RecordThenAsync("create-account", $"{ConsoleCaller.Of(user)} created account '{account}'", $"created with role {ConsolePolicies.RoleName(parsed)}",
            async () => password = await users.AddAsync(account, parsed, ct).ConfigureAwait(false), $"account '{account}' created ({ConsolePolicies.RoleName(parsed)})", ct).ConfigureAwait(false);
        return result with { Password = password };
    }

    public async Task<AccountResult> SetDisabledAsync(ClaimsPrincipal user, string? account, bool disabled, CancellationToken ct)
    {
        var action = disabled ? "disable-account" : "enable-account";
        if (await AdministratorAsync(user, action, ct).ConfigureAwait(false) is { } refused)
        {
            return refused;
        }
        if (await ExistingAsync(account, ct).ConfigureAwait(false) is not { } target)
        {
            return Invalid(action, "not changed: no such account");
        }
        if (!await LeavesAnAdministratorAsync(target with { Disabled = disabled }, ct).ConfigureAwait(false))
        {
            return Invalid(action, "not changed: that would leave no enabled administrator account");
        }
        return await RecordThenAsync(action, $"{ConsoleCaller.Of(user)} {(disabled ? "disabled" : "enabled")} account '{target.Name}'", disabled ? "disabled" : "enabled",
            () => users.SetDisabledAsync(target.Name, disabled, ct), $"account '{target.Name}' {(disabled ? "disabled" : "enabled")}", ct).ConfigureAwait(false);
    }

    public async Task<AccountResult> SetRoleAsync(ClaimsPrincipal user, string? account, string? role, CancellationToken ct)
    {
        if (await AdministratorAsync(user, "set-role", ct).ConfigureAwait(false) is { } refused)
        {
            return refused;
        }
        if (await ExistingAsync(account, ct).ConfigureAwait(false) is not { } target)
        {
            return Invalid("set-role", "not changed: no such account");
        }
        if (ParseRole(role) is not { } parsed)
        {
            return Invalid("set-role", "not changed: the role is viewer, operator or administrator");
        }
        if (!await LeavesAnAdministratorAsync(target with { Role = parsed }, ct).ConfigureAwait(false))
        {
            return Invalid("set-role", "not changed: that would leave no enabled administrator account");
        }
        var word = ConsolePolicies.RoleName(parsed);
        return await RecordThenAsync("set-role", $"{ConsoleCaller.Of(user)} set the role of account '{target.Name}'", $"role {ConsolePolicies.RoleName(target.Role)} -> {word}",
            () => users.SetRoleAsync(target.Name, parsed, ct), $"account '{target.Name}' is now {word}", ct).ConfigureAwait(false);
    }

    /// <summary>
    /// Gives another account a generated password (shown once) and ends every session of it: for a forgotten password
    /// or one that may be known to someone else. An administrator's own password is changed on the password page instead
    /// (a reset would end the session asking for it).
    /// </summary>
    public async Task<AccountResult> ResetPasswordAsync(ClaimsPrincipal user, string? account, CancellationToken ct)
    {
        if (await AdministratorAsync(user, "reset-password", ct).ConfigureAwait(false) is { } refused)
        {
            return refused;
        }
        if (await ExistingAsync(account, ct).ConfigureAwait(false) is not { } target)
        {
            return Invalid("reset-password", "not reset: no such account");
        }
        if (target.Name == user.Identity?.Name)
        {
            return Invalid("reset-password", "not reset: change your own password on the password page");
        }
        string? password = null;
        var result = await RecordThenAsync("reset-password", $"{ConsoleCaller.Of(user)} reset the password of account '{target.Name}'",
            "password replaced by a generated one; every session of the account ended",
            async () => password = await users.ResetPasswordAsync(target.Name, ct).ConfigureAwait(false),
            $"password of '{target.Name}' reset, every session of it ended", ct).ConfigureAwait(false);
        return result with { Password = password };
    }

    /// <summary>Exact role names only: a number or another spelling is malformed input, not a role.</summary>
    public static ConsoleRole? ParseRole(string? role) =>
        Enum.GetValues<ConsoleRole>().Select(r => (ConsoleRole?)r).FirstOrDefault(r => ConsolePolicies.RoleName(r!.Value) == role);

    /// <summary>Checked before the change is recorded (the store checks again when it makes it).</summary>
    private async Task<bool> LeavesAnAdministratorAsync(ConsoleUser changed, CancellationToken ct) =>
        (await users.ListAsync(ct).ConfigureAwait(false)).Select(u => u.Name == changed.Name ? changed : u)
            .Any(u => u.Role == ConsoleRole.Administrator && !u.Disabled);

    private async Task<ConsoleUser?> ExistingAsync(string? account, CancellationToken ct) =>
        account is not null && ConsoleUserStore.IsValidName(account) ? await users.FindAsync(account, ct).ConfigureAwait(false) : null;

    /// <summary>
    /// Null when <paramref name="user"/> may manage accounts: the administrator policy, and the account still an enabled
    /// administrator in the store, or for a provider's user, its session still from the configured provider.
    /// </summary>
    private async Task<AccountResult?> AdministratorAsync(ClaimsPrincipal user, string action, CancellationToken ct)
    {
        var name = user.Identity?.Name;
        var allowed = name is not null && (await authorization.AuthorizeAsync(user, ConsolePolicies.Administrator).ConfigureAwait(false)).Succeeded
            && (OidcSignIn.IsProviderSession(user, config?.Oidc, out var valid) ? valid
                : NegotiateSignIn.IsWindowsSession(user) ? await SessionStanding.StandsAsync(user, users, config?.Oidc, config?.WindowsSignIn, null, ct).ConfigureAwait(false)
                : await users.FindAsync(name, ct).ConfigureAwait(false) is { Disabled: false, Role: ConsoleRole.Administrator });
        return allowed ? null : Refuse(action, name, $"refused: {action.Replace('-', ' ')} needs the administrator role");
    }

    private async Task<AccountResult> RecordThenAsync(string action, string target, string outcome, Func<Task> change, string done, CancellationToken ct)
    {
        long sequence;
        try
        {
            sequence = (await controller.RecordConsoleChangeAsync("console-" + action, target, outcome, ct).ConfigureAwait(false)).AuditSequence;
        }
        catch (Exception e) when (e is not OperationCanceledException and not OutOfMemoryException)
        {
            metrics.Actions.Add(1, new("action", action), new("outcome", "failed"));
            log.LogWarning("{Action} not made: the controller did not record it: {Error}", action, e.Message);
            return new AccountResult(false, false, $"not changed: the controller did not record the change in its audit log ({e.Message})");
        }
        try
        {
            await change().ConfigureAwait(false);
        }
        catch (Exception e) when (e is ArgumentException or InvalidOperationException or IOException)
        {
            // Recorded as requested but not made (a race with another change, or the disk): the page says so.
            metrics.Actions.Add(1, new("action", action), new("outcome", "failed"));
            return new AccountResult(false, false, $"not changed: {e.Message} (audit record {sequence} names the request)");
        }
        metrics.Actions.Add(1, new("action", action), new("outcome", "done"));
        log.LogInformation("{Target}: {Outcome} (audit record {Sequence})", target, outcome, sequence);
        return new AccountResult(true, false, $"{done}; recorded in the audit log (record {sequence})");
    }

    private AccountResult Refuse(string action, string? user, string message)
    {
        metrics.Actions.Add(1, new("action", action), new("outcome", "refused_role"));
        log.LogWarning("console user {User} refused: {Action}", user ?? "?", action);
        return new AccountResult(false, true, message);
    }

    private AccountResult Invalid(string action, string message)
    {
        metrics.Actions.Add(1, new("action", action), new("outcome", "invalid"));
        return new AccountResult(false, false, message);
    }
}
