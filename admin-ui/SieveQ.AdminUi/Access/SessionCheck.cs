using System.Security.Claims;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.Cookies;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// The cookie handler's check of every request's session against the account store: a session whose account was
/// removed, disabled or given another role since sign-in is rejected and signed out, so an administrator's change
/// takes effect at the user's next request rather than when the cookie expires.
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
        var stored = name is null ? null : await users.FindAsync(name, context.HttpContext.RequestAborted).ConfigureAwait(false);
        if (stored is null || stored.Disabled || ConsolePolicies.RoleName(stored.Role) != role)
        {
            context.RejectPrincipal();
            await context.HttpContext.SignOutAsync(CookieAuthenticationDefaults.AuthenticationScheme).ConfigureAwait(false);
        }
    }
}
