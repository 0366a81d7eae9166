namespace SieveQ.AdminUi.Access;

/// <summary>
/// Headers on every response: no framing (clickjacking), no MIME sniffing, no referrer, and a CSP that allows only
/// this origin's scripts. Styles allow 'unsafe-inline' because MudBlazor sets style attributes on its elements.
/// </summary>
public static class SecurityHeaders
{
    public const string ContentSecurityPolicy =
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
        "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'self'; object-src 'none'";

    public static IApplicationBuilder UseSecurityHeaders(this IApplicationBuilder app) =>
        app.Use((context, next) =>
        {
            var h = context.Response.Headers;
            h.ContentSecurityPolicy = ContentSecurityPolicy;
            h.XFrameOptions = "DENY";
            h.XContentTypeOptions = "nosniff";
            h["Referrer-Policy"] = "no-referrer";
            h["Cross-Origin-Opener-Policy"] = "same-origin";
            h.CacheControl = "no-store";
            return next(context);
        });
}
