using System.Net;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.Authentication.OpenIdConnect;
using Microsoft.Extensions.Options;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// Sign-out of a session signed in through the provider (OpenID Connect RP-initiated logout 1.0): after the console's
/// cookie is removed, the browser is sent to the provider's end_session_endpoint with the session's ID token as
/// id_token_hint and <see cref="OidcSignIn.SignedOutCallbackPath"/> as the way back, where the handler checks the state
/// and ends on the sign-in page. It goes there through a page of the console's own that moves on by itself: the
/// sign-out is a form post, and the CSP's form-action 'self' would stop that post's redirect to another origin. When
/// console.json says <see cref="ConsoleOidcConfig.SignOutAtProvider"/> false, or the provider names no
/// end_session_endpoint or cannot be reached, the sign-out is the console's own only, and the log says why.
/// </summary>
public static class OidcSignOut
{
    /// <summary>The name the session keeps the ID token under (in its cookie, the only token kept).</summary>
    public const string IdTokenName = "id_token";

    /// <summary>An ID token longer than this is not kept (the cookie would outgrow what browsers take).</summary>
    public const int MaxIdTokenChars = 6 * 1024;

    /// <summary>Removes the console's session; true when the response now sends the browser on to the provider, false when the caller answers (local sign-out only).</summary>
    public static async Task<bool> SignOutAsync(HttpContext context, ConsoleOidcConfig? oidc)
    {
        ArgumentNullException.ThrowIfNull(context);
        var atProvider = oidc is { SignOutAtProvider: true } && OidcSignIn.IsProviderSession(context.User, oidc, out var valid) && valid;
        var idToken = atProvider ? await context.GetTokenAsync(CookieAuthenticationDefaults.AuthenticationScheme, IdTokenName).ConfigureAwait(false) : null;
        var user = context.User.Identity?.Name;
        await context.SignOutAsync(CookieAuthenticationDefaults.AuthenticationScheme).ConfigureAwait(false);
        if (!atProvider)
        {
            return false;
        }
        context.Items[IdTokenName] = idToken;
        var log = context.RequestServices.GetRequiredService<ILoggerFactory>().CreateLogger(typeof(OidcSignOut).FullName!);
        try
        {
            var options = context.RequestServices.GetRequiredService<IOptionsMonitor<OpenIdConnectOptions>>().Get(OidcSignIn.Scheme);
            var discovery = await options.ConfigurationManager!.GetConfigurationAsync(context.RequestAborted).ConfigureAwait(false);
            if (string.IsNullOrEmpty(discovery.EndSessionEndpoint))
            {
                throw new InvalidOperationException("its discovery document names no end_session_endpoint");
            }
            await context.SignOutAsync(OidcSignIn.Scheme, new AuthenticationProperties { RedirectUri = AccountEndpoints.LoginPath }).ConfigureAwait(false);
        }
        catch (Exception e) when (e is InvalidOperationException or HttpRequestException)
        {
            // No end_session_endpoint in the discovery document, or the provider unreachable: signed out here only.
            log.LogWarning("console logout: {User} signed out of the console only, not at the provider {Authority}: {Reason}", user, oidc!.Authority, e.Message);
            return false;
        }
        log.LogInformation("console logout: {User} sent to sign out at the provider {Authority}", user, oidc!.Authority);
        return true;
    }

    /// <summary>The handler's redirect to the end_session_endpoint, answered as a page that moves on by itself.</summary>
    internal static async Task ToProviderAsync(RedirectContext context)
    {
        var message = context.ProtocolMessage;
        if (string.IsNullOrEmpty(message.IssuerAddress))
        {
            // Checked before the sign-out; should the discovery document change in between, the console's own sign-out stands.
            context.Response.Redirect(AccountEndpoints.LoginPath);
            context.HandleResponse();
            return;
        }
        message.IdTokenHint ??= context.HttpContext.Items[IdTokenName] as string;
        // The handler protects the state only after this event, for the redirect it no longer makes: done here, as it would.
        if (!string.IsNullOrEmpty(message.State))
        {
            context.Properties.Items[OpenIdConnectDefaults.UserstatePropertiesKey] = message.State;
        }
        message.State = context.Options.StateDataFormat.Protect(context.Properties);
        var target = WebUtility.HtmlEncode(message.CreateLogoutRequestUrl());
        var response = context.Response;
        response.StatusCode = StatusCodes.Status200OK;
        response.ContentType = "text/html; charset=utf-8";
        response.Headers.CacheControl = "no-store";
        await response.WriteAsync(
            $"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={target}"><title>Signing out - SieveQ console</title></head><body><main><p>Signed out of the console. <a href="{target}">Continue to sign out at the provider</a></p></main></body></html>""",
            context.HttpContext.RequestAborted).ConfigureAwait(false);
        context.HandleResponse();
    }
}
