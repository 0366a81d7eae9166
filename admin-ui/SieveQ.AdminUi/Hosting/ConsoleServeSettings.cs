namespace SieveQ.AdminUi.Hosting;

/// <summary>
/// What `serve` takes from its command line over the deployment's files: the listen URL (else console.json's) and
/// the controller's URL and TLS pin (else controller.json's). The installed Windows service passes the installer's
/// settings this way, so the deployment's files need not be edited on each host.
/// </summary>
public sealed record ConsoleServeSettings(string? Url, string? ControllerUrl, string? ControllerPin)
{
    public static ConsoleServeSettings FromFiles { get; } = new(null, null, null);
}
