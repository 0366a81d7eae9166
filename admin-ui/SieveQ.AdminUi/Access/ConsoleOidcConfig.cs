using System.Diagnostics.CodeAnalysis;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// console.json's <c>oidc</c>: sign-in through an OpenID Connect provider (authorization code flow with PKCE) beside
/// the local accounts. The provider's users get a console role only through <see cref="Roles"/>: the values of
/// <see cref="RoleClaim"/> in their ID token mapped to viewer, operator or administrator (the highest mapped wins);
/// a user with no mapped value is refused.
/// </summary>
public sealed record ConsoleOidcConfig
{
    /// <summary>Shown on the sign-in page: "Sign in with {DisplayName}".</summary>
    public required string DisplayName { get; init; }
    /// <summary>The issuer: https://, or http:// on loopback only (a test provider); its discovery document is read from here.</summary>
    public required string Authority { get; init; }
    public required string ClientId { get; init; }
    /// <summary>The file holding the client secret (owner-only), relative to the deployment directory. Never rendered or logged.</summary>
    public required string ClientSecretFile { get; init; }
    /// <summary>Scopes asked for besides <c>openid</c>.</summary>
    public IReadOnlyList<string> Scopes { get; init; } = ["profile"];
    /// <summary>The ID token claim that carries the user's groups or roles (one value, or an array of values).</summary>
    public string RoleClaim { get; init; } = "groups";
    /// <summary>The ID token claim naming the user in the console and its audit records (<c>oidc:NAME</c>); <c>sub</c> when it is absent or unusable.</summary>
    public string UserNameClaim { get; init; } = "preferred_username";
    /// <summary>Role claim value to console role name (viewer, operator, administrator).</summary>
    public required IReadOnlyDictionary<string, string> Roles { get; init; }
    /// <summary>
    /// Sign-out also ends the session at the provider (OpenID Connect RP-initiated logout, with the ID token as the
    /// hint), when its discovery document names an end_session_endpoint; false: the console's own session only.
    /// </summary>
    public bool SignOutAtProvider { get; init; } = true;

    private const int MaxRoles = 256;
    private const int MaxScopes = 16;

    /// <exception cref="DeploymentException">A value is malformed, the authority is cleartext off loopback, or the console is not on https.</exception>
    public void Check(string consoleUrl, string where)
    {
        [DoesNotReturn]
        void Refuse(string what) => throw new DeploymentException($"{where}: oidc: {what}");
        if (!consoleUrl.StartsWith("https://", StringComparison.Ordinal))
        {
            Refuse("needs the console on https:// (the sign-in's cookies cross sites and must be Secure)");
        }
        if (!ConfigText.IsText(DisplayName, 64))
        {
            Refuse("displayName must be 1 to 64 characters without control characters");
        }
        if (!Uri.TryCreate(Authority, UriKind.Absolute, out var authority) || authority.Scheme is not ("https" or "http")
            || authority.Query.Length > 0 || authority.Fragment.Length > 0 || authority.UserInfo.Length > 0 || Authority.Length > 512)
        {
            Refuse($"authority '{Authority}' is not an http(s) URL without query, fragment or user info");
        }
        else if (authority.Scheme == Uri.UriSchemeHttp && !LoopbackHost.Is(authority))
        {
            Refuse($"authority '{Authority}' is cleartext off loopback; use https://");
        }
        if (!IsToken(ClientId, 256))
        {
            Refuse("clientId must be 1 to 256 printable ASCII characters without spaces");
        }
        if (string.IsNullOrWhiteSpace(ClientSecretFile))
        {
            Refuse("clientSecretFile is required");
        }
        if (Scopes is null || Scopes.Count > MaxScopes || Scopes.Any(s => !IsToken(s, 128) || s.Contains('"', StringComparison.Ordinal) || s.Contains('\\', StringComparison.Ordinal)))
        {
            Refuse($"scopes: at most {MaxScopes}, each 1 to 128 printable ASCII characters without spaces, quotes or backslashes");
        }
        if (!IsToken(RoleClaim, 128) || !IsToken(UserNameClaim, 128))
        {
            Refuse("roleClaim and userNameClaim must be 1 to 128 printable ASCII characters without spaces");
        }
        if (Roles is null || Roles.Count is 0 or > MaxRoles)
        {
            Refuse($"roles must map 1 to {MaxRoles} claim values to viewer, operator or administrator");
        }
        foreach (var (value, role) in Roles)
        {
            if (!ConfigText.IsText(value, 256))
            {
                Refuse("a roles key (a claim value) must be 1 to 256 characters without control characters");
            }
            if (ParseRole(role) is null)
            {
                Refuse($"roles: '{value}' maps to '{role}', which is not viewer, operator or administrator");
            }
        }
    }

    /// <summary>The highest console role any of <paramref name="claimValues"/> maps to; null when none does.</summary>
    public ConsoleRole? RoleFor(IEnumerable<string> claimValues) =>
        claimValues.Select(v => Roles.TryGetValue(v, out var r) ? ParseRole(r) : null).Where(r => r is not null).Max();

    private static ConsoleRole? ParseRole(string? name) =>
        Enum.GetValues<ConsoleRole>().Select(r => (ConsoleRole?)r).FirstOrDefault(r => ConsolePolicies.RoleName(r!.Value) == name);

    private static bool IsToken(string? s, int max) => s is { Length: > 0 } && s.Length <= max && s.All(c => c is > ' ' and <= '~');
}
