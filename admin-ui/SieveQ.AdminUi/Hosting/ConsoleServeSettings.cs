namespace SieveQ.AdminUi.Hosting;

/// <summary>
/// What `serve` takes from its command line over the deployment's files: the listen URL (else console.json's), the
/// TLS certificate and key (PEM; else console.json's <c>tls</c>) and the controller's URL and TLS pin (else
/// controller.json's). The installed Windows service passes the installer's settings this way, so the deployment's
/// files need not be edited on each host; `sieveq up` passes its generated certificate this way, so console.json
/// keeps what the operator configured.
/// </summary>
public sealed record ConsoleServeSettings(string? Url, string? ControllerUrl, string? ControllerPin, string? TlsCertificateFile = null, string? TlsKeyFile = null)
{
    public static ConsoleServeSettings FromFiles { get; } = new(null, null, null);

    /// <summary>The certificate given on the command line, none when not given.</summary>
    /// <exception cref="Deployment.DeploymentException">Only one of the certificate and its key is given.</exception>
    public ConsoleTlsConfig? Tls()
    {
        if ((TlsCertificateFile is null) != (TlsKeyFile is null))
        {
            throw new Deployment.DeploymentException("--tls-certificate and --tls-key go together (a PEM certificate and its PEM key)");
        }
        return TlsCertificateFile is null ? null : new ConsoleTlsConfig { CertificateFile = TlsCertificateFile, KeyFile = TlsKeyFile };
    }
}
