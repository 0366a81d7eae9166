namespace SieveQ.Cli.ConsoleCertificates;

/// <summary>
/// How `sieveq up` serves its console, from <c>--console-tls auto|off</c> and <c>--console-cert</c>/<c>--console-key</c>:
/// with the deployment's own CA (<see cref="Auto"/>, the default), with the operator's certificate (<see cref="Provided"/>),
/// or in clear on loopback (<see cref="Off"/>, the console's old default, for a tool that cannot do TLS).
/// </summary>
internal abstract record ConsoleTlsChoice
{
    public const string AutoName = "auto";
    public const string OffName = "off";

    private ConsoleTlsChoice()
    {
    }

    public sealed record Auto : ConsoleTlsChoice;

    public sealed record Off : ConsoleTlsChoice;

    /// <summary>The operator's PEM certificate (chain after the leaf allowed) and its PEM private key, full paths.</summary>
    public sealed record Provided(string CertificateFile, string KeyFile) : ConsoleTlsChoice;

    /// <summary>The choice the options make, or why they make none (a usage error: nothing has been read yet).</summary>
    public static (ConsoleTlsChoice? Choice, string? Error) Parse(string? mode, string? certificateFile, string? keyFile)
    {
        var explicitMode = mode is not null;
        mode ??= AutoName;
        if (mode is not (AutoName or OffName))
        {
            return (null, $"--console-tls '{mode}': expected {AutoName} (a certificate from the deployment's own CA) or {OffName} (http:// on loopback); for your own certificate give --console-cert FILE --console-key FILE");
        }
        if (certificateFile is null && keyFile is null)
        {
            return (mode == OffName ? new Off() : new Auto(), null);
        }
        if (certificateFile is null || keyFile is null)
        {
            return (null, "--console-cert and --console-key go together (a PEM certificate and its PEM private key)");
        }
        if (explicitMode)
        {
            return (null, $"--console-tls {mode} and --console-cert/--console-key contradict each other; give one of them");
        }
        return (new Provided(Path.GetFullPath(certificateFile), Path.GetFullPath(keyFile)), null);
    }
}
