using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.Cookies;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// The cookie handler's check of every request's session (<see cref="SessionStanding"/>): a session that no longer
/// stands is rejected and signed out, so an administrator's change takes effect at the user's next request rather
/// than when the cookie expires. Open pages make no requests; <see cref="CircuitSessionCheck"/> checks those.
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
        var windows = context.HttpContext.RequestServices?.GetService<Hosting.ConsoleConfig>()?.WindowsSignIn;
        var logouts = context.HttpContext.RequestServices?.GetService<ProviderLogouts>();
        if (!await SessionStanding.StandsAsync(context.Principal, users, oidc, windows, logouts, context.HttpContext.RequestAborted).ConfigureAwait(false))
        {
            context.HttpContext.RequestServices?.GetService<Hosting.ConsoleMetrics>()?.SessionsEnded.Add(1, new KeyValuePair<string, object?>("where", "request"));
            context.RejectPrincipal();
            await context.HttpContext.SignOutAsync(CookieAuthenticationDefaults.AuthenticationScheme).ConfigureAwait(false);
        }
    }
}
