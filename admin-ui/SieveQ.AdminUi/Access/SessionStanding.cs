using System.Security.Claims;
using System.Security.Cryptography;
using System.Text;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// Whether a signed-in session still stands: a local account's while the account exists, is enabled, has the
/// session's role and the password it signed in with (<see cref="PasswordStampType"/>: a reset ends every session
/// of the account, a user's own change every session but the one they changed it from); a Windows sign-in's while
/// console.json's mapping entry that gave its role still gives it; a provider's while that provider is the configured
/// one and has not logged it out (<see cref="BackChannelLogout"/>). The one rule for the cookie's check at every
/// request (<see cref="SessionCheck"/>) and the open pages' periodic check (<see cref="CircuitSessionCheck"/>).
/// </summary>
public static class SessionStanding
{
    /// <summary>A digest of the password hash the session signed in with; the hash has its own salt, so any new password changes it.</summary>
    public const string PasswordStampType = "urn:sieveq:console:password";

    /// <summary>A random id given to each local sign-in, so that the session a user changes their password from can stand on.</summary>
    public const string SessionIdType = "urn:sieveq:console:session";

    public static string NewSessionId() => Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(16));

    public static string PasswordStampOf(ConsoleUser user)
    {
        ArgumentNullException.ThrowIfNull(user);
        return Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes(user.PasswordHash)).AsSpan(0, 8));
    }

    /// <param name="logouts">The provider's back-channel logouts: a provider session they name no longer stands.</param>
    public static async Task<bool> StandsAsync(ClaimsPrincipal? principal, ConsoleUserStore users, ConsoleOidcConfig? oidc, WindowsSignInConfig? windows,
        ProviderLogouts? logouts, CancellationToken ct)
    {
        ArgumentNullException.ThrowIfNull(users);
        if (principal?.Identity is not { IsAuthenticated: true })
        {
            return false;
        }
        if (OidcSignIn.IsProviderSession(principal, oidc, out var valid))
        {
            return valid && logouts?.Ended(principal) != true;
        }
        var role = principal.FindFirst(ClaimTypes.Role)?.Value;
        if (NegotiateSignIn.IsWindowsSession(principal))
        {
            var mappedBy = principal.FindFirst(NegotiateSignIn.MappedByClaim)?.Value;
            return windows is not null && mappedBy is not null && windows.RoleOfEntry(mappedBy) is { } now && ConsolePolicies.RoleName(now) == role;
        }
        var name = principal.Identity.Name;
        var stored = name is null ? null : await users.FindAsync(name, ct).ConfigureAwait(false);
        return stored is { Disabled: false } && ConsolePolicies.RoleName(stored.Role) == role
            && (principal.FindFirst(PasswordStampType)?.Value == PasswordStampOf(stored)
                || (stored.PasswordSetBySession is { } by && principal.FindFirst(SessionIdType)?.Value == by));
    }
}
