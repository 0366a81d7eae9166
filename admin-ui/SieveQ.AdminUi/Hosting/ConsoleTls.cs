using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using SieveQ.Deployment;
using SieveQ.Transport.Hardening;
using SieveQ.Transport.Tls;

namespace SieveQ.AdminUi.Hosting;

/// <summary>
/// console.json's <c>tls</c>: the certificate an https:// console presents. Either a PEM certificate
/// (<see cref="CertificateFile"/>, chain after the leaf allowed) with its PEM private key (<see cref="KeyFile"/>), or a
/// PKCS#12 file (<c>.pfx</c> / <c>.p12</c>) with its password in <see cref="PasswordFile"/> (owner-only; none for a
/// PKCS#12 without password). Paths are relative to the deployment directory.
/// </summary>
public sealed record ConsoleTlsConfig
{
    public required string CertificateFile { get; init; }
    public string? KeyFile { get; init; }
    public string? PasswordFile { get; init; }

    internal bool IsPkcs12 =>
        CertificateFile.EndsWith(".pfx", StringComparison.OrdinalIgnoreCase) || CertificateFile.EndsWith(".p12", StringComparison.OrdinalIgnoreCase);
}

/// <summary>
/// The console's listener: https:// with the configured certificate on any address, or http:// on loopback only (a
/// session cookie must not cross a network in clear). Certificates are checked at start so a bad file stops the
/// console with its reason instead of failing each browser's handshake.
/// </summary>
public static class ConsoleTls
{
    public const string UrlRule =
        "url must be https://ADDRESS:PORT with a tls certificate, or http:// on a loopback address (no TLS: loopback only; docs/console.md)";

    /// <summary>Where <c>init-tls</c> puts a generated certificate and key, beside the console's management key.</summary>
    public const string GeneratedFileStem = "console-tls";

    /// <summary>A certificate or key file larger than this is refused before it is read.</summary>
    private const long MaxFileBytes = 1024 * 1024;
    private const int MaxPasswordBytes = 1024;

    /// <exception cref="DeploymentException">The URL is malformed, cleartext off loopback, https without a certificate, or http with one.</exception>
    public static void CheckUrl(string? url, ConsoleTlsConfig? tls, string where)
    {
        if (!Uri.TryCreate(url, UriKind.Absolute, out var u) || u.Scheme is not ("http" or "https") || !IPAddress.TryParse(Address(u), out var ip)
            || u.AbsolutePath != "/" || u.Query.Length > 0 || u.Fragment.Length > 0
            || u.UserInfo.Length > 0)
        {
            throw new DeploymentException($"{where}: '{url}' is not scheme://IP-ADDRESS:PORT; {UrlRule}");
        }
        if (u.Scheme == Uri.UriSchemeHttp && !IPAddress.IsLoopback(ip))
        {
            throw new DeploymentException($"{where}: '{url}' is cleartext off loopback; {UrlRule}");
        }
        if (u.Scheme == Uri.UriSchemeHttps && tls is null)
        {
            throw new DeploymentException($"{where}: '{url}' is https:// but console.json has no \"tls\" certificate (`SieveQ.AdminUi init-tls` makes one)");
        }
        if (u.Scheme == Uri.UriSchemeHttp && tls is not null)
        {
            throw new DeploymentException($"{where}: console.json has a \"tls\" certificate but '{url}' is http://; use https://");
        }
        if (tls is not null && (string.IsNullOrWhiteSpace(tls.CertificateFile) || tls.IsPkcs12 == (tls.KeyFile is not null) || !tls.IsPkcs12 && tls.PasswordFile is not null))
        {
            throw new DeploymentException($"{where}: tls needs either certificateFile (PEM) with keyFile (PEM), or a .pfx/.p12 certificateFile with an optional passwordFile");
        }
    }

    /// <summary>The certificate of an https:// console, null for http://.</summary>
    /// <exception cref="DeploymentException">A missing, oversized or garbled file, no private key, or a certificate not valid now or not for servers.</exception>
    public static X509Certificate2? LoadCertificate(ConsoleConfig config, DeploymentConfig deployment, TimeProvider time)
    {
        ArgumentNullException.ThrowIfNull(config);
        ArgumentNullException.ThrowIfNull(deployment);
        ArgumentNullException.ThrowIfNull(time);
        if (config.Tls is not { } tls)
        {
            return null;
        }
        var certificatePath = deployment.Resolve(tls.CertificateFile);
        var keyPath = tls.KeyFile is null ? null : deployment.Resolve(tls.KeyFile);
        X509Certificate2 loaded;
        try
        {
            CheckFile(certificatePath);
            if (tls.IsPkcs12)
            {
                var password = tls.PasswordFile is null ? null : ReadPassword(deployment.Resolve(tls.PasswordFile));
                loaded = X509CertificateLoader.LoadPkcs12FromFile(certificatePath, password);
            }
            else
            {
                CheckFile(keyPath!);
                loaded = X509Certificate2.CreateFromPemFile(certificatePath, keyPath);
            }
        }
        catch (Exception e) when (e is CryptographicException or ArgumentException or IOException or UnauthorizedAccessException)
        {
            throw new DeploymentException($"console TLS certificate {certificatePath}{(keyPath is null ? "" : $" with key {keyPath}")} cannot be loaded: {e.Message}", e);
        }
        try
        {
            Check(loaded, certificatePath, time.GetUtcNow());
            if (!OperatingSystem.IsWindows() || tls.IsPkcs12)
            {
                return loaded;
            }
            // Schannel cannot use the ephemeral key of a PEM import; a PKCS#12 round trip gives it a stored one.
            using (loaded)
            {
                return X509CertificateLoader.LoadPkcs12(loaded.Export(X509ContentType.Pkcs12), null);
            }
        }
        catch
        {
            loaded.Dispose();
            throw;
        }
    }

    private static void Check(X509Certificate2 certificate, string path, DateTimeOffset now)
    {
        if (!certificate.HasPrivateKey)
        {
            throw new DeploymentException($"console TLS certificate {path}: no private key for it");
        }
        if (now < certificate.NotBefore.ToUniversalTime() || now > certificate.NotAfter.ToUniversalTime())
        {
            throw new DeploymentException($"console TLS certificate {path} is valid from {certificate.NotBefore:u} to {certificate.NotAfter:u}, not now");
        }
        var usage = certificate.Extensions.OfType<X509EnhancedKeyUsageExtension>().FirstOrDefault();
        if (usage is not null && !usage.EnhancedKeyUsages.Cast<Oid>().Any(o => o.Value == TlsServerCertificate.ServerAuthenticationOid))
        {
            throw new DeploymentException($"console TLS certificate {path} is not for TLS servers (its extended key usage lacks serverAuth)");
        }
    }

    private static void CheckFile(string path)
    {
        var file = new FileInfo(path);
        if (!file.Exists)
        {
            throw new IOException($"{path} does not exist");
        }
        if (file.Length is 0 or > MaxFileBytes)
        {
            throw new IOException($"{path} is empty or larger than {MaxFileBytes} bytes");
        }
    }

    private static string ReadPassword(string path)
    {
        var file = new FileInfo(path);
        if (!file.Exists || file.Length > MaxPasswordBytes)
        {
            throw new IOException($"password file {path} does not exist or is larger than {MaxPasswordBytes} bytes");
        }
        return File.ReadAllText(path).TrimEnd('\r', '\n');
    }

    /// <summary>
    /// `init-tls`: a new self-signed ECDSA P-256 certificate (the deployment's own TLS certificate kind, in the key
    /// directory) for <paramref name="url"/>, written into console.json.
    /// </summary>
    /// <returns>The configuration saved and the certificate's SHA-256 fingerprint, for the operator to compare in the browser.</returns>
    /// <param name="names">Host names (and addresses) browsers will be given for the console, for the certificate's
    /// subjectAlternativeName; the listen address is added unless it is a wildcard.</param>
    public static (ConsoleConfig Config, string Fingerprint) CreateCertificate(string deploymentDirectory, string url, IReadOnlyCollection<string>? names = null)
    {
        var deployment = DeploymentFile.Load(deploymentDirectory);
        var cfg = ConsoleConfig.Load(deployment.BaseDirectory);
        var keyDirectory = deployment.Resolve(deployment.KeyDirectory);
        var alternativeNames = (names ?? []).ToList();
        if (alternativeNames.FirstOrDefault(n => Uri.CheckHostName(n) is not (UriHostNameType.Dns or UriHostNameType.IPv4 or UriHostNameType.IPv6)) is { } bad)
        {
            throw new DeploymentException($"--name '{bad}' is not a host name or an IP address");
        }
        if (Uri.TryCreate(url, UriKind.Absolute, out var listen) && IPAddress.TryParse(Address(listen), out var ip)
            && !ip.Equals(IPAddress.Any) && !ip.Equals(IPAddress.IPv6Any))
        {
            alternativeNames.Add(ip.ToString());
        }
        Directory.CreateDirectory(keyDirectory);
        TlsServerCertificate.Create(Path.Combine(keyDirectory, GeneratedFileStem + ".crt"), Path.Combine(keyDirectory, GeneratedFileStem + ".key"),
            "sieveq-console", alternativeNames.Distinct(StringComparer.OrdinalIgnoreCase).ToList());
        var tls = new ConsoleTlsConfig
        {
            CertificateFile = Path.GetRelativePath(deployment.BaseDirectory, Path.Combine(keyDirectory, GeneratedFileStem + ".crt")),
            KeyFile = Path.GetRelativePath(deployment.BaseDirectory, Path.Combine(keyDirectory, GeneratedFileStem + ".key")),
        };
        CheckUrl(url, tls, $"--url '{url}'");
        var updated = cfg with { Url = url, Tls = tls };
        updated.Oidc?.Check(url, $"--url '{url}'");
        using var certificate = LoadCertificate(updated, deployment, TimeProvider.System)!;
        updated.Save(deployment.BaseDirectory);
        return (updated, certificate.GetCertHashString(HashAlgorithmName.SHA256));
    }

    /// <summary>
    /// Kestrel's listener for the console's URL, each connection through the per-source limit, TLS when a certificate is
    /// given: each handshake takes the certificate current then, so a renewal needs no restart.
    /// </summary>
    public static void Listen(KestrelServerOptions kestrel, string url, ConsoleCertificate? certificate, SourceConnectionLimiter limiter)
    {
        ArgumentNullException.ThrowIfNull(kestrel);
        ArgumentNullException.ThrowIfNull(limiter);
        var u = new Uri(url);
        kestrel.Listen(IPAddress.Parse(Address(u)), u.Port, listen =>
        {
            listen.Use(next => limiter.Wrap(next));
            if (certificate is not null)
            {
                listen.UseHttps(o => o.ServerCertificateSelector = (_, _) => certificate.Current);
            }
        });
    }

    /// <summary>The listen address of a URL: an IPv6 literal without its brackets.</summary>
    private static string Address(Uri url) => url.Host.Trim('[', ']');

    /// <summary>
    /// HSTS on every https response: a browser that once reached the console over TLS will not be talked into
    /// cleartext for it. One year, no subdomains, no preload (the console is one host, not a domain).
    /// </summary>
    public static IApplicationBuilder UseStrictTransportSecurity(this IApplicationBuilder app) =>
        app.Use((context, next) =>
        {
            if (context.Request.IsHttps)
            {
                context.Response.Headers.StrictTransportSecurity = "max-age=31536000";
            }
            return next(context);
        });
}
