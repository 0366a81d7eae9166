using System.Collections.Immutable;
using System.Net;
using System.Net.Sockets;
using System.Security.Claims;
using Microsoft.AspNetCore;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Microsoft.IdentityModel.JsonWebTokens;
using Microsoft.IdentityModel.Tokens;
using OpenIddict.Abstractions;
using OpenIddict.Server;
using OpenIddict.Server.AspNetCore;
using static OpenIddict.Abstractions.OpenIddictConstants;
using static OpenIddict.Server.OpenIddictServerEvents;

namespace SieveQ.Tests.OpenIdProvider;

/// <summary>A user of the test provider: the password its login form takes and the values of its "groups" claim.</summary>
public sealed record TestProviderUser(string Name, string Password, IReadOnlyList<string> Groups);

/// <summary>
/// An OpenID Connect provider on http://localhost:PORT/ (loopback; "localhost" so that it is another site than a
/// console on 127.0.0.1, as a real provider is): discovery, JWKS, the authorization endpoint with a login form, the
/// token endpoint, the end-session endpoint (RP-initiated logout: the ID token hint checked, back only to the client's
/// /signout-callback-oidc). One client, authenticated by its secret, with one redirect URI; PKCE (S256) required; ID tokens
/// signed with an ephemeral RSA key and carrying sub, preferred_username and groups. No store: OpenIddict's degraded
/// mode, the client checked by the handlers below.
/// </summary>
public sealed class TestOpenIdProvider : IAsyncDisposable
{
    private readonly WebApplication _app;

    private TestOpenIdProvider(WebApplication app, Uri authority)
    {
        _app = app;
        Authority = authority;
    }

    public Uri Authority { get; }

    /// <summary>Authorization requests seen (each a login form shown or a sign-in answered), to show the console really went there.</summary>
    public int AuthorizationRequests => _authorizationRequests;
    private int _authorizationRequests;

    /// <summary>The subjects of the ID token hints of the end-session requests answered, in order.</summary>
    public IReadOnlyList<string> EndSessions
    {
        get
        {
            lock (_endSessions)
            {
                return [.. _endSessions];
            }
        }
    }
    private readonly List<string> _endSessions = [];

    /// <summary>The sid of each sign-in the provider answered for a user, in order (each sign-in is a session at the provider).</summary>
    public IReadOnlyList<string> SessionsOf(string user)
    {
        lock (_sessions)
        {
            return [.. _sessions.Where(s => s.User == user).Select(s => s.Sid)];
        }
    }
    private readonly List<(string User, string Sid)> _sessions = [];

    /// <summary>
    /// A back-channel logout token as the provider would post it (signed with its signing key, typ logout+jwt, the
    /// logout event, a fresh jti), for its sid and/or the user's subject; <paramref name="tamper"/> edits the claims
    /// and <paramref name="foreignKey"/> signs with a key the provider does not publish, for the refusal tests.
    /// </summary>
    public string LogoutToken(string clientId, string? user, string? sid, Action<Dictionary<string, object>>? tamper = null, bool foreignKey = false,
        DateTime? issuedAt = null, TimeSpan? lifetime = null)
    {
        var claims = new Dictionary<string, object>
        {
            ["jti"] = Guid.NewGuid().ToString("N"),
            ["events"] = new Dictionary<string, object> { ["http://schemas.openid.net/event/backchannel-logout"] = new Dictionary<string, object>() },
        };
        if (user is not null)
        {
            claims["sub"] = "subject-" + user;
        }
        if (sid is not null)
        {
            claims["sid"] = sid;
        }
        tamper?.Invoke(claims);
        var credentials = foreignKey
            ? new SigningCredentials(new RsaSecurityKey(System.Security.Cryptography.RSA.Create(2048)), SecurityAlgorithms.RsaSha256)
            : _app.Services.GetRequiredService<IOptionsMonitor<OpenIddictServerOptions>>().CurrentValue.SigningCredentials[0];
        var issued = issuedAt ?? DateTime.UtcNow;
        return new JsonWebTokenHandler { SetDefaultTimesOnTokenCreation = false }.CreateToken(new SecurityTokenDescriptor
        {
            Issuer = Authority.ToString(),
            Audience = clientId,
            IssuedAt = issued,
            Expires = issued + (lifetime ?? TimeSpan.FromMinutes(2)),
            TokenType = "logout+jwt",
            SigningCredentials = credentials,
            Claims = claims,
        });
    }

    /// <param name="endSession">False: no end-session endpoint (as some providers have none), absent from discovery too.</param>
    public static async Task<TestOpenIdProvider> StartAsync(string clientId, string clientSecret, Uri redirectUri, IEnumerable<TestProviderUser> users,
        bool endSession = true)
    {
        ArgumentNullException.ThrowIfNull(redirectUri);
        var byName = users.ToDictionary(u => u.Name, StringComparer.Ordinal);
        var signedOutUri = new Uri(redirectUri, "/signout-callback-oidc");
        var port = FreeLoopbackPort();
        var authority = new Uri($"http://localhost:{port}/");
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.SetMinimumLevel(LogLevel.Warning);
        builder.WebHost.ConfigureKestrel(k => k.ListenLocalhost(port));
        builder.Services.AddOpenIddict().AddServer(o =>
        {
            o.SetIssuer(authority);
            o.SetAuthorizationEndpointUris("connect/authorize").SetTokenEndpointUris("connect/token");
            if (endSession)
            {
                o.SetEndSessionEndpointUris("connect/endsession");
            }
            o.AllowAuthorizationCodeFlow().RequireProofKeyForCodeExchange();
            o.RegisterScopes(Scopes.OpenId, Scopes.Profile);
            o.RegisterClaims(Claims.Subject, Claims.PreferredUsername, "groups");
            o.AddEphemeralEncryptionKey().AddEphemeralSigningKey();
            o.DisableAccessTokenEncryption();
            o.EnableDegradedMode();
            o.DisableTokenStorage();
            var aspNetCore = o.UseAspNetCore().EnableAuthorizationEndpointPassthrough().DisableTransportSecurityRequirement();
            if (endSession)
            {
                aspNetCore.EnableEndSessionEndpointPassthrough();
            }
            o.AddEventHandler<ValidateEndSessionRequestContext>(b => b.UseInlineHandler(context =>
            {
                if (context.PostLogoutRedirectUri is { } back && back != signedOutUri.ToString())
                {
                    context.Reject(Errors.InvalidRequest, "post_logout_redirect_uri is not the client's");
                }
                return default;
            }));
            o.AddEventHandler<ValidateAuthorizationRequestContext>(b => b.UseInlineHandler(context =>
            {
                if (context.ClientId != clientId)
                {
                    context.Reject(Errors.InvalidClient, "unknown client_id");
                }
                else if (context.RedirectUri != redirectUri.ToString())
                {
                    context.Reject(Errors.InvalidRequest, "redirect_uri is not the client's");
                }
                return default;
            }));
            o.AddEventHandler<ValidateTokenRequestContext>(b => b.UseInlineHandler(context =>
            {
                if (context.ClientId != clientId || context.Request.ClientSecret != clientSecret)
                {
                    context.Reject(Errors.InvalidClient, "wrong client_id or client_secret");
                }
                return default;
            }));
        });
        var app = builder.Build();
        var provider = new TestOpenIdProvider(app, authority);
        app.MapMethods("/connect/authorize", [HttpMethods.Get, HttpMethods.Post], async (HttpContext http) =>
        {
            Interlocked.Increment(ref provider._authorizationRequests);
            var request = http.GetOpenIddictServerRequest() ?? throw new InvalidOperationException("not an OpenID Connect request");
            var form = http.Request.HasFormContentType ? await http.Request.ReadFormAsync() : null;
            string? name = form?["username"];
            if (name is null)
            {
                return LoginForm(request, refused: false);
            }
            if (!byName.TryGetValue(name, out var user) || user.Password != form!["password"])
            {
                return LoginForm(request, refused: true);
            }
            var identity = new ClaimsIdentity(OpenIddictServerAspNetCoreDefaults.AuthenticationScheme, Claims.PreferredUsername, Claims.Role);
            var sid = "sid-" + Guid.NewGuid().ToString("N");
            lock (provider._sessions)
            {
                provider._sessions.Add((user.Name, sid));
            }
            identity.SetClaim(Claims.Subject, "subject-" + user.Name).SetClaim(Claims.PreferredUsername, user.Name).SetClaim("sid", sid);
            identity.SetClaims("groups", [.. user.Groups]);
            identity.SetScopes(request.GetScopes());
            identity.SetDestinations(_ => [Destinations.IdentityToken, Destinations.AccessToken]);
            return Results.SignIn(new ClaimsPrincipal(identity), null, OpenIddictServerAspNetCoreDefaults.AuthenticationScheme);
        });
        app.MapMethods("/connect/endsession", [HttpMethods.Get, HttpMethods.Post], async (HttpContext http) =>
        {
            // OpenIddict has checked the hint's signature and issuer; its subject says whose session the client ended.
            var hint = await http.AuthenticateAsync(OpenIddictServerAspNetCoreDefaults.AuthenticationScheme);
            lock (provider._endSessions)
            {
                provider._endSessions.Add(hint.Principal?.GetClaim(Claims.Subject) ?? "(no hint)");
            }
            return Results.SignOut(new AuthenticationProperties { RedirectUri = "/" }, [OpenIddictServerAspNetCoreDefaults.AuthenticationScheme]);
        });
        await app.StartAsync();
        // Ready when it answers: the first discovery and key requests pay for OpenIddict's start-up, not the test's first sign-in.
        using var warm = new HttpClient { Timeout = TimeSpan.FromSeconds(180) }; // OpenIddict's start-up took over 60 s under a load of 20
        (await warm.GetAsync(new Uri(authority, ".well-known/openid-configuration"))).EnsureSuccessStatusCode().Dispose();
        (await warm.GetAsync(new Uri(authority, ".well-known/jwks"))).EnsureSuccessStatusCode().Dispose();
        return provider;
    }

    /// <summary>The provider's login page: the authorization request's parameters carried through as hidden fields.</summary>
    private static IResult LoginForm(OpenIddictRequest request, bool refused)
    {
        var fields = string.Concat(request.GetParameters()
            .Where(p => p.Key is not ("username" or "password"))
            .Select(p => $"""<input type="hidden" name="{WebUtility.HtmlEncode(p.Key)}" value="{WebUtility.HtmlEncode((string?)p.Value)}">"""));
        var error = refused ? """<p role="alert">Wrong user name or password.</p>""" : "";
        return Results.Content($"""
            <!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Test identity provider</title></head><body><main>
            <h1>Test identity provider</h1>{error}
            <form method="post" action="/connect/authorize">{fields}
            <label for="username">Provider user</label><input id="username" name="username">
            <label for="password">Provider password</label><input id="password" name="password" type="password">
            <button type="submit">Continue</button></form></main></body></html>
            """, "text/html; charset=utf-8");
    }

    private static int FreeLoopbackPort()
    {
        using var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        return ((IPEndPoint)probe.LocalEndpoint).Port;
    }

    public async ValueTask DisposeAsync()
    {
        await _app.StopAsync();
        await _app.DisposeAsync();
    }
}
