using System.Security.Cryptography.X509Certificates;
using SieveQ.Deployment;

namespace SieveQ.Cli.ConsoleCertificates;

/// <summary>
/// The console's TLS for one `sieveq up`: which certificate the console is started with (`serve --url https://...
/// --tls-certificate --tls-key`, console.json left as it is), the lines `up` prints about it, and how `up` trusts the
/// console when it waits for it.
/// </summary>
internal sealed class UpConsoleTls : IDisposable
{
    private readonly X509Certificate2? _anchor;

    private UpConsoleTls(string? certificateFile, string? keyFile, X509Certificate2? anchor, LocalConsoleCertificate? local, IReadOnlyList<string> lines)
    {
        CertificateFile = certificateFile;
        KeyFile = keyFile;
        _anchor = anchor;
        Local = local;
        Lines = lines;
    }

    /// <summary>No console TLS from `up` and nothing printed (no console at all); nothing to dispose.</summary>
    public static UpConsoleTls None { get; } = new(null, null, null, null, []);

    /// <summary>The PEM certificate and key the console serves, null for http:// (or console.json's own tls).</summary>
    public string? CertificateFile { get; }

    public string? KeyFile { get; }

    /// <summary>The generated certificate's files, for renewal while `up` runs; null unless --console-tls auto.</summary>
    public LocalConsoleCertificate? Local { get; }

    /// <summary>What `up` prints about the console's certificate with the endpoints.</summary>
    public IReadOnlyList<string> Lines { get; }

    /// <param name="keyDirectory">The deployment's key folder, where a generated CA and certificate live.</param>
    /// <param name="consoleJsonHasTls">console.json has its own tls (`SieveQ.AdminUi init-tls`, an enterprise certificate):
    /// `auto` then leaves it to the console; only an explicit --console-cert overrides it.</param>
    /// <exception cref="DeploymentException">A provided certificate that cannot serve, or a generated CA that cannot be used.</exception>
    public static UpConsoleTls Prepare(ConsoleTlsChoice choice, string keyDirectory, bool consoleJsonHasTls, TimeProvider time)
    {
        ArgumentNullException.ThrowIfNull(choice);
        ArgumentNullException.ThrowIfNull(time);
        try
        {
            return Make(choice, keyDirectory, consoleJsonHasTls, time);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or System.Security.Cryptography.CryptographicException)
        {
            throw new DeploymentException($"the console's TLS certificate in {keyDirectory}: {e.Message}", e);
        }
    }

    /// <summary>
    /// The operator's certificate, checked (<see cref="ProvidedConsoleCertificate.Check"/>): `up` does this before
    /// anything is created or started, and serves the console with the result.
    /// </summary>
    /// <exception cref="DeploymentException">The certificate or key cannot serve the console.</exception>
    public static UpConsoleTls Provide(ConsoleTlsChoice.Provided provided, TimeProvider time)
    {
        ArgumentNullException.ThrowIfNull(provided);
        ArgumentNullException.ThrowIfNull(time);
        var certificate = ProvidedConsoleCertificate.Check(provided.CertificateFile, provided.KeyFile, time.GetUtcNow());
        return new UpConsoleTls(provided.CertificateFile, provided.KeyFile, certificate, null,
            [$"  console cert   {provided.CertificateFile}  SHA-256 {Fingerprints.Sha256(certificate)}  (until {certificate.NotAfter.ToUniversalTime():u})"]);
    }

    private static UpConsoleTls Make(ConsoleTlsChoice choice, string keyDirectory, bool consoleJsonHasTls, TimeProvider time)
    {
        switch (choice)
        {
            case ConsoleTlsChoice.Provided provided:
                return Provide(provided, time);
            case ConsoleTlsChoice.Auto when consoleJsonHasTls:
                return new UpConsoleTls(null, null, null, null, ["  console cert   console.json's tls (--console-cert/--console-key to use another)"]);
            case ConsoleTlsChoice.Auto:
            {
                var local = LocalConsoleCertificate.In(keyDirectory);
                var state = local.Ensure(time);
                var authority = X509CertificateLoader.LoadCertificateFromFile(local.AuthorityCertificateFile);
                var note = state.Change switch
                {
                    LocalCertificateChange.AuthorityCreated => "new CA: trust it once in your browser, after comparing this fingerprint",
                    LocalCertificateChange.Renewed => "server certificate renewed now",
                    _ => "server certificate reused",
                };
                return new UpConsoleTls(local.CertificateFile, local.KeyFile, authority, local,
                [
                    $"  console CA     {local.AuthorityCertificateFile}  SHA-256 {state.AuthorityFingerprint}",
                    $"                 ({note}; it names localhost, 127.0.0.1 and ::1, valid until {state.NotAfter:u}, renewed by `up` {LocalConsoleCertificate.RenewalWindow.TotalDays:0} days before)",
                ]);
            }
            default:
                return None;
        }
    }

    /// <summary>The URL the console serves: console.json's address and port, https:// when `up` gives it a certificate.</summary>
    public string Url(string consoleJsonUrl)
    {
        ArgumentNullException.ThrowIfNull(consoleJsonUrl);
        if (CertificateFile is null)
        {
            return consoleJsonUrl;
        }
        var builder = new UriBuilder(consoleJsonUrl) { Scheme = Uri.UriSchemeHttps };
        return builder.Uri.GetLeftPart(UriPartial.Authority);
    }

    /// <summary>`serve` arguments beyond --deployment.</summary>
    public IReadOnlyList<string> ServeArguments(string url) =>
        CertificateFile is null ? [] : ["--url", url, "--tls-certificate", CertificateFile, "--tls-key", KeyFile!];

    /// <summary>The handler `up` asks the console with: it trusts only what `up` gave the console (or the machine's roots for console.json's own tls).</summary>
    public HttpClientHandler ProbeHandler() => _anchor switch
    {
        null => new HttpClientHandler(),
        // The generated certificate is trusted by its CA (it is renewed while `up` runs), the operator's by itself.
        _ when Local is not null => ConsoleCertificateTrust.ByAuthority(_anchor),
        _ => ConsoleCertificateTrust.ByCertificate(_anchor),
    };

    public void Dispose() => _anchor?.Dispose();
}
