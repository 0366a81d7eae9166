using System.Globalization;
using System.Security.Claims;
using System.Text.Json;
using Microsoft.AspNetCore.Authentication.OpenIdConnect;
using Microsoft.Extensions.Options;
using Microsoft.IdentityModel.JsonWebTokens;
using Microsoft.IdentityModel.Protocols.OpenIdConnect;
using Microsoft.IdentityModel.Tokens;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// OpenID Connect Back-Channel Logout 1.0: the provider posts a logout token (a JWT it signed) to
/// <see cref="Path"/> when a user signs out there or their session at the provider ends, and the console ends the
/// matching sessions (<see cref="ProviderLogouts"/>): the one with the token's sid, or every session of its subject
/// when it has no sid. The token is checked as the specification asks: the provider's signature (keys from its
/// discovery document, refreshed once for an unknown key), issuer, audience (this console's client id), issued within
/// <see cref="MaxClockSkew"/>, the back-channel logout event, a jti, a sid or sub, and no nonce (so an ID token is
/// never taken for one).
/// </summary>
public static class BackChannelLogout
{
    public const string Path = "/signout-oidc-backchannel";
    public const string EventType = "http://schemas.openid.net/event/backchannel-logout";

    /// <summary>The session's claims that a logout is matched against, taken from the ID token at sign-in.</summary>
    public const string SidClaim = "urn:sieveq:console:oidc-sid";
    public const string SubjectClaim = "urn:sieveq:console:oidc-sub";
    public const string SignedInAtClaim = "urn:sieveq:console:signed-in-at";

    public const int MaxIdLength = 255;
    public const int MaxTokenChars = 16 * 1024;
    public static readonly TimeSpan MaxClockSkew = TimeSpan.FromMinutes(5);

    /// <summary>What a valid logout token asks: end the session <see cref="Sid"/>, or every session of <see cref="Subject"/>.</summary>
    public sealed record Request(string? Sid, string? Subject, string TokenId);

    /// <summary>The claims a provider session keeps for <see cref="ProviderLogouts.Ended"/>.</summary>
    public static IEnumerable<Claim> SessionClaims(ClaimsPrincipal idToken, DateTimeOffset now)
    {
        ArgumentNullException.ThrowIfNull(idToken);
        yield return new Claim(SignedInAtClaim, now.ToUnixTimeMilliseconds().ToString(CultureInfo.InvariantCulture));
        if (idToken.FindFirst("sid")?.Value is { Length: > 0 and <= MaxIdLength } sid)
        {
            yield return new Claim(SidClaim, sid);
        }
        if (idToken.FindFirst("sub")?.Value is { Length: > 0 and <= MaxIdLength } subject)
        {
            yield return new Claim(SubjectClaim, subject);
        }
    }

    public static void MapBackChannelLogout(this IEndpointRouteBuilder routes)
    {
        routes.MapPost(Path, ReceiveAsync).AllowAnonymous().DisableAntiforgery();
    }

    private static async Task<IResult> ReceiveAsync(HttpContext context, IOptionsMonitor<OpenIdConnectOptions> options, ConsoleConfig config,
        ProviderLogouts logouts, ConsoleMetrics metrics, ILogger<ProviderLogouts> log, TimeProvider time)
    {
        context.Response.Headers.CacheControl = "no-cache, no-store";
        IResult Refuse(string outcome, string why)
        {
            metrics.BackChannelLogouts.Add(1, new KeyValuePair<string, object?>("outcome", outcome));
            log.LogWarning("back-channel logout from {Address} refused: {Reason}", context.Connection.RemoteIpAddress, why);
            return Results.BadRequest(new { error = "invalid_request", error_description = why });
        }
        if (config.Oidc is not { } oidc || options.Get(OidcSignIn.Scheme).ConfigurationManager is not { } provider)
        {
            return Refuse("invalid", "no OpenID Connect provider is configured");
        }
        if (!context.Request.HasFormContentType)
        {
            return Refuse("invalid", "a logout token is posted as a form (application/x-www-form-urlencoded)");
        }
        var form = await context.Request.ReadFormAsync(context.RequestAborted).ConfigureAwait(false);
        if (form["logout_token"] is not [{ Length: > 0 and <= MaxTokenChars } token])
        {
            return Refuse("invalid", $"one logout_token of at most {MaxTokenChars} characters");
        }
        var (request, problem) = await ValidateAsync(token, await provider.GetConfigurationAsync(context.RequestAborted).ConfigureAwait(false),
            oidc.ClientId, time.GetUtcNow()).ConfigureAwait(false);
        if (problem is not null && problem.StartsWith(UnknownKey, StringComparison.Ordinal))
        {
            // The provider may have rolled its keys since the discovery document was read: read it again, once.
            provider.RequestRefresh();
            (request, problem) = await ValidateAsync(token, await provider.GetConfigurationAsync(context.RequestAborted).ConfigureAwait(false),
                oidc.ClientId, time.GetUtcNow()).ConfigureAwait(false);
        }
        if (request is null)
        {
            return Refuse("invalid", problem!);
        }
        switch (logouts.Record(request.Sid, request.Subject, request.TokenId))
        {
            case ProviderLogouts.Outcome.Replayed:
                return Refuse("replayed", "this logout token (its jti) was taken before");
            case ProviderLogouts.Outcome.Full:
                metrics.BackChannelLogouts.Add(1, new KeyValuePair<string, object?>("outcome", "full"));
                log.LogWarning("back-channel logout refused: {Max} logouts are held; the sessions end at their expiry", ProviderLogouts.MaxEntries);
                return Results.StatusCode(StatusCodes.Status503ServiceUnavailable);
        }
        metrics.BackChannelLogouts.Add(1, new KeyValuePair<string, object?>("outcome", "accepted"));
        log.LogInformation("back-channel logout from {Provider}: {What} ended", oidc.DisplayName,
            request.Sid is not null ? $"session {request.Sid}" : $"every session of {request.Subject}");
        return Results.Ok();
    }

    private const string UnknownKey = "no key of the provider signed it";

    /// <summary>The logout a token asks for, or why it is not a valid logout token for <paramref name="clientId"/>.</summary>
    public static async Task<(Request? Request, string? Problem)> ValidateAsync(string token, OpenIdConnectConfiguration provider, string clientId, DateTimeOffset now)
    {
        ArgumentNullException.ThrowIfNull(provider);
        var parameters = new TokenValidationParameters
        {
            ValidIssuer = provider.Issuer,
            ValidAudience = clientId,
            IssuerSigningKeys = provider.SigningKeys,
            RequireSignedTokens = true,
            RequireExpirationTime = false,
            ValidateLifetime = true,
            ClockSkew = MaxClockSkew,
            LifetimeValidator = (notBefore, expires, _, p) => (expires is null || expires.Value + p.ClockSkew >= now.UtcDateTime)
                && (notBefore is null || notBefore.Value - p.ClockSkew <= now.UtcDateTime),
        };
        var result = await new JsonWebTokenHandler().ValidateTokenAsync(token, parameters).ConfigureAwait(false);
        if (!result.IsValid)
        {
            return (null, result.Exception is SecurityTokenSignatureKeyNotFoundException
                ? UnknownKey
                : "the logout token does not validate: " + (result.Exception?.Message ?? "invalid"));
        }
        var jwt = (JsonWebToken)result.SecurityToken;
        if (jwt.Typ is { Length: > 0 } typ && typ is not ("logout+jwt" or "JWT"))
        {
            return (null, $"a logout token's typ is logout+jwt or JWT, not {typ}");
        }
        using var payload = JsonDocument.Parse(Base64UrlEncoder.Decode(jwt.EncodedPayload));
        var claims = payload.RootElement;
        if (!claims.TryGetProperty("iat", out var iat) || !iat.TryGetInt64(out var issued)
            || Math.Abs(now.ToUnixTimeSeconds() - issued) > MaxClockSkew.TotalSeconds)
        {
            return (null, $"the logout token's iat is missing or more than {MaxClockSkew.TotalMinutes:0} minutes from the console's clock");
        }
        if (!claims.TryGetProperty("events", out var events) || events.ValueKind != JsonValueKind.Object
            || !events.TryGetProperty(EventType, out var logoutEvent) || logoutEvent.ValueKind != JsonValueKind.Object)
        {
            return (null, $"the logout token has no events claim with {EventType}");
        }
        if (claims.TryGetProperty("nonce", out _))
        {
            return (null, "a logout token has no nonce (this looks like an ID token)");
        }
        var tokenId = Text(claims, "jti");
        var sid = Text(claims, "sid");
        var subject = Text(claims, "sub");
        if (tokenId is null)
        {
            return (null, $"the logout token has no jti (a string of 1 to {MaxIdLength} characters)");
        }
        if (sid is null && subject is null)
        {
            return (null, $"the logout token names neither a sid nor a sub (strings of 1 to {MaxIdLength} characters)");
        }
        return (new Request(sid, subject, tokenId), null);
    }

    private static string? Text(JsonElement claims, string name) =>
        claims.TryGetProperty(name, out var value) && value.ValueKind == JsonValueKind.String && value.GetString() is { Length: > 0 and <= MaxIdLength } text
            ? text
            : null;
}
