using System.Net;
using System.Security.Claims;
using System.Text.RegularExpressions;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.Authentication.OpenIdConnect;
using Microsoft.IdentityModel.Protocols.OpenIdConnect;
using SieveQ.AdminUi.Hosting;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// Sign-in through the configured OpenID Connect provider: ASP.NET Core's handler runs the authorization code flow
/// with PKCE and checks the ID token's signature, issuer, audience, lifetime and nonce; this class only turns a
/// validated token into the same session a local account gets (a name and one role claim, so the same policies
/// decide), or refuses it when no role claim value maps to a console role.
/// </summary>
public static partial class OidcSignIn
{
    public const string Scheme = "oidc";
    public const string LoginPath = "/account/oidc";
    public const string CallbackPath = "/signin-oidc";
    /// <summary>Where the provider sends the browser back after a sign-out there (the handler checks its state).</summary>
    public const string SignedOutCallbackPath = "/signout-callback-oidc";
    /// <summary>Where the provider's answer lands after sign-in; see <see cref="MapOidcEndpoints"/>.</summary>
    private const string ReturnPath = "/account/oidc/return";

    /// <summary>Marks a session signed in through the provider: <see cref="SessionCheck"/> does not look for it among the local accounts.</summary>
    public const string SourceClaim = "sieveq:sign-in";
    public const string SourceValue = "oidc";
    /// <summary>The authority the session was signed in through: a session from another provider than the configured one is ended.</summary>
    public const string AuthorityClaim = "sieveq:oidc-authority";
    public const string NamePrefix = "oidc:";

    public static AuthenticationBuilder AddConsoleOidc(this AuthenticationBuilder auth, ConsoleConfig config, DeploymentConfig deployment)
    {
        ArgumentNullException.ThrowIfNull(auth);
        ArgumentNullException.ThrowIfNull(config);
        ArgumentNullException.ThrowIfNull(deployment);
        if (config.Oidc is not { } oidc)
        {
            return auth;
        }
        var secret = ReadClientSecret(deployment.Resolve(oidc.ClientSecretFile));
        return auth.AddOpenIdConnect(Scheme, oidc.DisplayName, o =>
        {
            o.Authority = oidc.Authority;
            o.RequireHttpsMetadata = oidc.Authority.StartsWith("https://", StringComparison.Ordinal);
            o.ClientId = oidc.ClientId;
            o.ClientSecret = secret;
            o.ResponseType = OpenIdConnectResponseType.Code;
            o.UsePkce = true;
            o.Scope.Clear();
            o.Scope.Add("openid");
            foreach (var scope in oidc.Scopes.Where(s => s != "openid"))
            {
                o.Scope.Add(scope);
            }
            // Claims as the token names them, so roleClaim "groups" or "roles" means that claim and nothing renamed.
            o.MapInboundClaims = false;
            o.GetClaimsFromUserInfoEndpoint = false;
            o.SaveTokens = false;
            o.UseTokenLifetime = false;
            o.SignInScheme = CookieAuthenticationDefaults.AuthenticationScheme;
            o.CallbackPath = CallbackPath;
            o.SignedOutCallbackPath = SignedOutCallbackPath;
            o.SignedOutRedirectUri = AccountEndpoints.LoginPath;
            o.BackchannelTimeout = TimeSpan.FromSeconds(20);
            o.RemoteAuthenticationTimeout = TimeSpan.FromMinutes(10);
            o.CorrelationCookie.Name = "sieveq-console-oidc-correlation.";
            o.NonceCookie.Name = "sieveq-console-oidc-nonce.";
            o.CorrelationCookie.SecurePolicy = CookieSecurePolicy.Always;
            o.NonceCookie.SecurePolicy = CookieSecurePolicy.Always;
            o.Events.OnTokenValidated = context => OnTokenValidatedAsync(context, config, oidc);
            o.Events.OnRedirectToIdentityProviderForSignOut = OidcSignOut.ToProviderAsync;
            o.Events.OnRemoteFailure = context =>
            {
                Services(context.HttpContext, out var metrics, out var log);
                metrics.Logins.Add(1, new KeyValuePair<string, object?>("outcome", "refused"), new KeyValuePair<string, object?>("method", "oidc"));
                log.LogWarning("console OIDC sign-in refused from {Address}: {Reason}", context.HttpContext.Connection.RemoteIpAddress, context.Failure?.Message);
                context.Response.Redirect(AccountEndpoints.LoginPath + "?error=oidc");
                context.HandleResponse();
                return Task.CompletedTask;
            };
        });
    }

    private static Task OnTokenValidatedAsync(TokenValidatedContext context, ConsoleConfig config, ConsoleOidcConfig oidc)
    {
        var token = context.Principal!;
        var subject = token.FindFirst("sub")?.Value;
        var preferred = token.FindFirst(oidc.UserNameClaim)?.Value;
        var name = preferred is not null && UsableName().IsMatch(preferred) ? preferred : subject is not null && UsableName().IsMatch(subject) ? subject : null;
        if (name is null)
        {
            context.Fail($"the ID token has no usable {oidc.UserNameClaim} or sub (letters, digits, '.', '_', '-', '@'; at most 64)");
            return Task.CompletedTask;
        }
        var role = oidc.RoleFor(token.FindAll(oidc.RoleClaim).Select(c => c.Value));
        if (role is null)
        {
            context.Fail($"user {NamePrefix}{name}: no value of its {oidc.RoleClaim} claim maps to a console role");
            return Task.CompletedTask;
        }
        var identity = new ClaimsIdentity(
            [
                new Claim(ClaimTypes.Name, NamePrefix + name),
                new Claim(ClaimTypes.Role, ConsolePolicies.RoleName(role.Value)),
                new Claim(SourceClaim, SourceValue),
                new Claim(AuthorityClaim, oidc.Authority),
                .. BackChannelLogout.SessionClaims(token, DateTimeOffset.UtcNow),
            ],
            CookieAuthenticationDefaults.AuthenticationScheme);
        context.Principal = new ClaimsPrincipal(identity);
        // Only the ID token is kept (in the session cookie): the hint a sign-out at the provider sends.
        if ((context.TokenEndpointResponse?.IdToken ?? context.ProtocolMessage?.IdToken) is { Length: > 0 and <= OidcSignOut.MaxIdTokenChars } idToken)
        {
            context.Properties!.StoreTokens([new AuthenticationToken { Name = OidcSignOut.IdTokenName, Value = idToken }]);
        }
        context.Properties!.IsPersistent = false;
        context.Properties.ExpiresUtc = DateTimeOffset.UtcNow.AddMinutes(config.SessionMinutes);
        Services(context.HttpContext, out var metrics, out var log);
        metrics.Logins.Add(1, new KeyValuePair<string, object?>("outcome", "accepted"), new KeyValuePair<string, object?>("method", "oidc"));
        log.LogInformation("console login: {User} ({Role}) through {Provider} from {Address}", NamePrefix + name, role, oidc.DisplayName, context.HttpContext.Connection.RemoteIpAddress);
        return Task.CompletedTask;
    }

    /// <summary>True for a session signed in through the provider that is still configured; false for a local account's session.</summary>
    /// <param name="valid">For a provider session: whether it may go on (same authority, a console role).</param>
    public static bool IsProviderSession(ClaimsPrincipal? principal, ConsoleOidcConfig? oidc, out bool valid)
    {
        valid = false;
        if (principal?.FindFirst(SourceClaim)?.Value != SourceValue)
        {
            return false;
        }
        var role = principal.FindFirst(ClaimTypes.Role)?.Value;
        valid = oidc is not null && principal.FindFirst(AuthorityClaim)?.Value == oidc.Authority
            && principal.Identity?.Name?.StartsWith(NamePrefix, StringComparison.Ordinal) == true
            && Enum.GetValues<ConsoleRole>().Any(r => ConsolePolicies.RoleName(r) == role);
        return true;
    }

    /// <summary>
    /// <c>GET /account/oidc</c> sends the browser to the provider (a link, not a form: the CSP's form-action 'self' would
    /// stop a form post redirected to another origin). <c>GET /account/oidc/return</c> is where the sign-in lands: the
    /// provider's answer reached the console as a cross-site post, and a browser does not send the SameSite=Strict
    /// session cookie on the redirect that follows it, so this page moves on by itself as a same-site navigation.
    /// </summary>
    public static void MapOidcEndpoints(this IEndpointRouteBuilder routes, ConsoleConfig config)
    {
        ArgumentNullException.ThrowIfNull(config);
        if (config.Oidc is null)
        {
            return;
        }
        routes.MapGet(LoginPath, async (string? returnUrl, HttpContext context) =>
        {
            try
            {
                await context.ChallengeAsync(Scheme, new AuthenticationProperties { RedirectUri = ReturnPath + "?returnUrl=" + Uri.EscapeDataString(LocalOrRoot(returnUrl)) })
                    .ConfigureAwait(false);
            }
            catch (InvalidOperationException e)
            {
                // The provider's discovery document or keys could not be read: say so on the sign-in page, not with a 500.
                Services(context, out var metrics, out var log);
                metrics.Logins.Add(1, new KeyValuePair<string, object?>("outcome", "provider_unavailable"), new KeyValuePair<string, object?>("method", "oidc"));
                log.LogWarning("console OIDC sign-in: provider {Authority} unavailable: {Reason}", config.Oidc.Authority, e.Message);
                context.Response.Redirect(AccountEndpoints.LoginPath + "?error=oidc");
            }
        }).AllowAnonymous();
        routes.MapGet(ReturnPath, (string? returnUrl) =>
        {
            var target = WebUtility.HtmlEncode(LocalOrRoot(returnUrl));
            return Results.Content(
                $"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={target}"><title>Signed in - SieveQ console</title></head><body><main><p><a href="{target}">Continue to the console</a></p></main></body></html>""",
                "text/html; charset=utf-8");
        }).AllowAnonymous();
    }

    private static string LocalOrRoot(string? url) =>
        url is { Length: > 0 and <= 512 } r && r.StartsWith('/') && !r.StartsWith("//", StringComparison.Ordinal) && !r.StartsWith("/\\", StringComparison.Ordinal)
            && !r.Any(char.IsControl) ? r : "/";

    /// <exception cref="DeploymentException">The file is missing, empty, too large or readable by others.</exception>
    internal static string ReadClientSecret(string path) => SecretFile.Read(path, "oidc: client secret file");

    private static void Services(HttpContext context, out ConsoleMetrics metrics, out ILogger log)
    {
        metrics = context.RequestServices.GetRequiredService<ConsoleMetrics>();
        log = context.RequestServices.GetRequiredService<ILoggerFactory>().CreateLogger(typeof(OidcSignIn).FullName!);
    }

    [GeneratedRegex("^[A-Za-z0-9._@-]{1,64}$")]
    private static partial Regex UsableName();
}
