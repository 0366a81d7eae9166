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
    public static async Task ValidateAsync(CookieValidatePrincipalContext context, ConsoleUserStore users)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(users);
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
