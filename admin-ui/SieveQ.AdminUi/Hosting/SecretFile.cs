using SieveQ.Deployment;
using SieveQ.Transport.Tls;

namespace SieveQ.AdminUi.Hosting;

/// <summary>
/// A secret the console reads from a file of its own (an OpenID Connect client secret, a webhook's signing key, an
/// SMTP password): one line, owner-only, so it never sits in console.json, which operators copy and show around.
/// </summary>
internal static class SecretFile
{
    public const int MaxBytes = 4096;

    /// <param name="what">How the error names the file, e.g. "oidc: client secret file".</param>
    /// <exception cref="DeploymentException">The file is missing, empty, too large, readable by others or not one line.</exception>
    public static string Read(string path, string what)
    {
        var file = new FileInfo(path);
        if (!file.Exists)
        {
            throw new DeploymentException($"{what} {path} does not exist");
        }
        if (file.Length is 0 or > MaxBytes)
        {
            throw new DeploymentException($"{what} {path} is empty or larger than {MaxBytes} bytes");
        }
        if (OwnerOnlyPemFile.IsOpenToOthers(path))
        {
            throw new DeploymentException($"{what} {path} is readable or writable by others; make it owner-only (chmod 600)");
        }
        var secret = File.ReadAllText(path).TrimEnd('\r', '\n');
        if (secret.Length == 0 || secret.Any(char.IsControl))
        {
            throw new DeploymentException($"{what} {path} must hold the secret on one line");
        }
        return secret;
    }
}
