using System.Security.Claims;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.Cookies;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// The cookie handler's check of every request's session against the account store: a session whose account was
/// removed, disabled or given another role since sign-in is rejected and signed out, so an administrator's change
/// takes effect at the user's next request rather than when the cookie expires. A Windows sign-in's session is checked
/// against console.json's mapping instead.
/// </summary>
public static class SessionCheck
{
    public static Task ValidateAsync(CookieValidatePrincipalContext context, ConsoleUserStore users) => ValidateAsync(context, users, null);

    /// <param name="oidc">The configured OpenID Connect provider: its sessions have no local account and are kept
    /// while the provider that signed them in is still the configured one (<see cref="OidcSignIn.IsProviderSession"/>).</param>
    public static async Task ValidateAsync(CookieValidatePrincipalContext context, ConsoleUserStore users, ConsoleOidcConfig? oidc)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(users);
        if (OidcSignIn.IsProviderSession(context.Principal, oidc, out var valid))
        {
            if (!valid)
            {
                context.RejectPrincipal();
                await context.HttpContext.SignOutAsync(CookieAuthenticationDefaults.AuthenticationScheme).ConfigureAwait(false);
            }
            return;
        }
        var name = context.Principal?.Identity?.Name;
        var role = context.Principal?.FindFirst(ClaimTypes.Role)?.Value;
        if (context.Principal?.FindFirst(ClaimTypes.AuthenticationMethod)?.Value == NegotiateSignIn.Method)
        {
            await ValidateWindowsAsync(context, role).ConfigureAwait(false);
            return;
        }
        var stored = name is null ? null : await users.FindAsync(name, context.HttpContext.RequestAborted).ConfigureAwait(false);
        if (stored is null || stored.Disabled || ConsolePolicies.RoleName(stored.Role) != role)
        {
            context.RejectPrincipal();
            await context.HttpContext.SignOutAsync(CookieAuthenticationDefaults.AuthenticationScheme).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// A Windows sign-in's session has no account in the store: it stays while Windows sign-in is on and the mapping
    /// entry that gave its role (a principal or a group, kept in the session) still gives that role.
    /// </summary>
    private static async Task ValidateWindowsAsync(CookieValidatePrincipalContext context, string? role)
    {
        var windows = context.HttpContext.RequestServices?.GetService<Hosting.ConsoleConfig>()?.WindowsSignIn;
        var mappedBy = context.Principal?.FindFirst(NegotiateSignIn.MappedByClaim)?.Value;
        if (windows is null || mappedBy is null || windows.RoleOfEntry(mappedBy) is not { } now || ConsolePolicies.RoleName(now) != role)
        {
            context.RejectPrincipal();
            await context.HttpContext.SignOutAsync(CookieAuthenticationDefaults.AuthenticationScheme).ConfigureAwait(false);
        }
    }
}
