using System.Security.Claims;
using Microsoft.AspNetCore.Authentication;
using SieveQ.Controller.Audit;

namespace SieveQ.AdminUi.Access;

/// <summary>
/// Puts the address of the connection that carries each authenticated request into the user's principal, so that
/// every change is audited with where it was asked from: a form post's own connection, and for the interactive pages
/// the connection that opened the page's circuit (the principal a circuit holds is the one that connection
/// authenticated). Never stored in the sign-in cookie: the address is the
/// request's, not the sign-in's, so a stolen cookie used elsewhere shows where it was used.
/// </summary>
public sealed class BrowserAddressClaim(IHttpContextAccessor http) : IClaimsTransformation
{
    public const string Type = "urn:sieveq:console:from";

    public Task<ClaimsPrincipal> TransformAsync(ClaimsPrincipal principal)
    {
        ArgumentNullException.ThrowIfNull(principal);
        var address = AuditAddress.Of(http.HttpContext?.Connection.RemoteIpAddress);
        if (principal.Identity is not { IsAuthenticated: true } || address is null || principal.FindFirst(Type)?.Value == address)
        {
            return Task.FromResult(principal);
        }
        // The transformation may run more than once on one request: a copy with the one current address, never two.
        // A deep copy: ClaimsPrincipal.Clone shares the identities, and the authenticated ticket's must stay as it was.
        var copy = new ClaimsPrincipal(principal.Identities.Select(i => i.Clone()));
        foreach (var identity in copy.Identities)
        {
            foreach (var stale in identity.FindAll(Type).ToList())
            {
                identity.RemoveClaim(stale);
            }
        }
        ((ClaimsIdentity)copy.Identity!).AddClaim(new Claim(Type, address));
        return Task.FromResult(copy);
    }
}
