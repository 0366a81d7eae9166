using System.Net;
using System.Net.Security;
using System.Security.Claims;
using System.Security.Principal;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.Mvc;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// Windows sign-in: <c>GET /account/login/windows</c> answers 401 <c>WWW-Authenticate: Negotiate</c>; a browser with
/// a Kerberos ticket for the console (SPN <c>HTTP/host</c>) retries with its token, which the platform checks (GSSAPI
/// with the keytab on Linux, SSPI on Windows, through <see cref="NegotiateAuthentication"/>). The identity's role
/// comes from <see cref="WindowsSignInConfig"/>, and the endpoint then issues the console's own cookie session, so
/// circuits, the role policies and the session check work as for a local account. Kerberos only: a handshake that
/// needs a second leg (NTLM) is refused, so no per-connection state is kept.
/// </summary>
public static class NegotiateSignIn
{
    public const string LoginPath = "/account/login/windows";
    /// <summary>The session's authentication method claim, which tells <see cref="SessionCheck"/> to re-check the mapping.</summary>
    public const string Method = "negotiate";
    /// <summary>The mapping entry that gave the role (a principal or a group), kept in the session.</summary>
    public const string MappedByClaim = "urn:sieveq:console:mapped-by";

    /// <summary>Whether the session is a Windows sign-in's (no local account: its role is console.json's mapping's).</summary>
    public static bool IsWindowsSession(ClaimsPrincipal user)
    {
        ArgumentNullException.ThrowIfNull(user);
        return user.FindFirst(ClaimTypes.AuthenticationMethod)?.Value == Method;
    }
    /// <summary>A Kerberos token with a large Windows PAC fits; Kestrel's 32 KiB header limit bounds it anyway.</summary>
    public const int MaxTokenChars = 30 * 1024;
    /// <summary>Group SIDs considered per sign-in.</summary>
    public const int MaxGroups = 1024;

    public static void MapNegotiateSignIn(this IEndpointRouteBuilder routes)
    {
        ArgumentNullException.ThrowIfNull(routes);
        routes.MapGet(LoginPath, SignInAsync).AllowAnonymous();
    }

    /// <summary>The console user's name for a Kerberos or Windows identity: never a local account's (those have no ':').</summary>
    public static string ConsoleName(string identity) =>
        (identity.Contains('\\', StringComparison.Ordinal) ? "windows:" : "kerberos:") + identity;

    private static async Task<IResult> SignInAsync([FromQuery] string? returnUrl, HttpContext context, ConsoleConfig config, ConsoleMetrics metrics,
        ILogger<WindowsSignInConfig> log)
    {
        if (config.WindowsSignIn is not { } windows)
        {
            return Results.NotFound();
        }
        var header = context.Request.Headers.Authorization;
        if (header.Count == 0 || !(header[0] ?? "").StartsWith("Negotiate ", StringComparison.OrdinalIgnoreCase))
        {
            return Challenge(context);
        }
        var token = ParseToken(header);
        if (token is null)
        {
            Count(metrics, "malformed");
            return Page(StatusCodes.Status400BadRequest, "Windows sign-in refused", "The browser sent a malformed Negotiate header.");
        }

        using var server = new NegotiateAuthentication(new NegotiateAuthenticationServerOptions { Package = "Negotiate" });
        var answer = server.GetOutgoingBlob(token, out var status);
        if (status == NegotiateAuthenticationStatusCode.ContinueNeeded)
        {
            // NTLM (no ticket, or the console's name is not the SPN's) needs more legs on one connection: not offered.
            Count(metrics, "refused");
            log.LogWarning("Windows sign-in from {Address} refused: the browser offered NTLM or a multi-leg handshake; Kerberos only", context.Connection.RemoteIpAddress);
            return Page(StatusCodes.Status401Unauthorized, "Windows sign-in refused",
                "The browser did not present a Kerberos ticket for this console (only Kerberos is accepted, not NTLM). Check that the console's address is the host of its SPN (HTTP/host).");
        }
        if (status != NegotiateAuthenticationStatusCode.Completed || !server.IsAuthenticated)
        {
            Count(metrics, "refused");
            log.LogWarning("Windows sign-in from {Address} refused: {Status}", context.Connection.RemoteIpAddress, status);
            return Page(StatusCodes.Status401Unauthorized, "Windows sign-in refused", "The Kerberos ticket was not accepted.");
        }
        var identity = server.RemoteIdentity;
        try
        {
            var name = identity.Name;
            if (!WindowsSignInConfig.IsPrincipal(name))
            {
                Count(metrics, "refused");
                log.LogWarning("Windows sign-in from {Address} refused: the identity's name is not a principal this console maps", context.Connection.RemoteIpAddress);
                return Page(StatusCodes.Status403Forbidden, "Windows sign-in refused", "This identity's name cannot be given a console role.");
            }
            if (!string.Equals(server.Package, "Kerberos", StringComparison.OrdinalIgnoreCase))
            {
                Count(metrics, "refused");
                log.LogWarning("Windows sign-in of {Principal} refused: authenticated with {Package}, not Kerberos", name, server.Package);
                return Page(StatusCodes.Status401Unauthorized, "Windows sign-in refused", "Only Kerberos is accepted, not NTLM.");
            }
            var mapped = windows.RoleFor(name, GroupsOf(identity));
            if (mapped is not { } role)
            {
                Count(metrics, "refused_no_role");
                log.LogWarning("Windows sign-in of {Principal} from {Address} refused: no console role is mapped to it or its groups", name, context.Connection.RemoteIpAddress);
                return Page(StatusCodes.Status403Forbidden, "No console role",
                    $"Windows signed you in as {name}, but this console gives that identity no role. An administrator maps principals and groups to roles in console.json.");
            }
            var user = ConsoleName(name);
            var session = new ClaimsIdentity(
            [
                new Claim(ClaimTypes.Name, user),
                new Claim(ClaimTypes.Role, ConsolePolicies.RoleName(role.Role)),
                new Claim(ClaimTypes.AuthenticationMethod, Method),
                new Claim(MappedByClaim, role.MappedBy),
            ], CookieAuthenticationDefaults.AuthenticationScheme);
            await context.SignInAsync(CookieAuthenticationDefaults.AuthenticationScheme, new ClaimsPrincipal(session),
                new AuthenticationProperties { IsPersistent = false, ExpiresUtc = DateTimeOffset.UtcNow.AddMinutes(config.SessionMinutes) }).ConfigureAwait(false);
            if (answer is { Length: > 0 })
            {
                // Mutual authentication: the browser may check that it reached the console it asked a ticket for.
                context.Response.Headers.WWWAuthenticate = "Negotiate " + Convert.ToBase64String(answer);
            }
            Count(metrics, "accepted");
            log.LogInformation("console login: {User} ({Role}, by {MappedBy}) from {Address}", user, role.Role, role.MappedBy, context.Connection.RemoteIpAddress);
            return Results.LocalRedirect(LocalReturnUrl(returnUrl));
        }
        finally
        {
            (identity as IDisposable)?.Dispose();
        }
    }

    private static void Count(ConsoleMetrics metrics, string outcome) =>
        metrics.Logins.Add(1, new KeyValuePair<string, object?>("outcome", outcome), new KeyValuePair<string, object?>("method", Method));

    /// <summary>The token of a single <c>Negotiate</c> header, or null when it is not one well-formed base64 token within bounds.</summary>
    internal static byte[]? ParseToken(Microsoft.Extensions.Primitives.StringValues header)
    {
        if (header.Count != 1 || header[0] is not { } value)
        {
            return null;
        }
        var encoded = value["Negotiate ".Length..].Trim();
        if (encoded.Length is 0 or > MaxTokenChars)
        {
            return null;
        }
        var bytes = new byte[encoded.Length * 3 / 4 + 3];
        return Convert.TryFromBase64String(encoded, bytes, out var written) ? bytes[..written] : null;
    }

    internal static string LocalReturnUrl(string? returnUrl) =>
        returnUrl is { Length: > 0 and <= 2048 } r && r.StartsWith('/') && !r.StartsWith("//", StringComparison.Ordinal) && !r.StartsWith("/\\", StringComparison.Ordinal) ? r : "/";

    /// <summary>The user's groups, by SID and by name: Windows gives them with the logon token; GSSAPI on Linux gives none.</summary>
    private static List<string> GroupsOf(IIdentity identity)
    {
        var groups = new List<string>();
        if (OperatingSystem.IsWindows() && identity is WindowsIdentity windows && windows.Groups is { } sids)
        {
            foreach (var sid in sids.Take(MaxGroups))
            {
                groups.Add(sid.Value);
                try
                {
                    groups.Add(sid.Translate(typeof(NTAccount)).Value);
                }
                catch (Exception e) when (e is IdentityNotMappedException or SystemException)
                {
                    // A SID the domain cannot name (a deleted group, a foreign domain): its SID still maps.
                }
            }
        }
        return groups;
    }

    /// <summary>401 with the Negotiate challenge; the page is what a browser without a ticket shows.</summary>
    private static IResult Challenge(HttpContext context)
    {
        context.Response.Headers.WWWAuthenticate = "Negotiate";
        return Page(StatusCodes.Status401Unauthorized, "Windows sign-in",
            "This browser did not present a Kerberos ticket for the console. Sign in to Windows (or kinit) in the console's realm, or use a console account.");
    }

    private static IResult Page(int status, string title, string message) =>
        Results.Content($"""
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>{WebUtility.HtmlEncode(title)} - SieveQ console</title><link rel="stylesheet" href="/console.css"></head>
            <body><main class="login-card"><h1>{WebUtility.HtmlEncode(title)}</h1>
            <p role="alert" data-testid="windows-login-error">{WebUtility.HtmlEncode(message)}</p>
            <p><a href="{AccountEndpoints.LoginPath}">Sign in with a console account</a></p></main></body></html>
            """, "text/html; charset=utf-8", statusCode: status);
}
