using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace SieveQ.Policy;

public sealed partial record AgentPolicy
{
    private const string EcPublicKeyOid = "1.2.840.10045.2.1";
    private const string RsaPublicKeyOid = "1.2.840.113549.1.1.1";
    private const string P256CurveOid = "1.2.840.10045.3.1.7";

    /// <summary>
    /// Every reason this policy cannot be applied, each naming the registry value it comes from; empty when
    /// it is valid. All problems are reported at once so one edit can fix them all.
    /// </summary>
    public IReadOnlyList<string> Validate()
    {
        var errors = new List<string>();
        ValidateEndpoints(errors);
        ValidateEnrolment(errors);
        ValidateRuleSet(errors);
        if (!Enum.IsDefined(DriverMode))
        {
            errors.Add($"{PolicyLayout.DriverMode}: {(int)DriverMode} is not enforce or audit");
        }
        ValidateRateLimits(errors);
        ValidateWhitelist(errors);
        return errors;
    }

    private void ValidateEndpoints(List<string> errors)
    {
        if (PreSqEndpoints.IsDefault)
        {
            errors.Add($"{PolicyLayout.PreSqEndpointsKey}: missing list");
            return;
        }
        if (PreSqEndpoints.Length > PolicyLimits.MaxPreSqEndpoints)
        {
            errors.Add($"{PolicyLayout.PreSqEndpointsKey}: {PreSqEndpoints.Length} entries, at most {PolicyLimits.MaxPreSqEndpoints} are allowed");
            return;
        }
        var seen = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        for (int i = 0; i < PreSqEndpoints.Length; i++)
        {
            string where = $"{PolicyLayout.PreSqEndpointsKey} entry {i + 1}";
            if (CheckHttpUrl(PreSqEndpoints[i], where, errors) is { } url && !seen.Add(url.AbsoluteUri))
            {
                errors.Add($"{where}: '{PreSqEndpoints[i]}' is listed twice");
            }
        }
    }

    private void ValidateEnrolment(List<string> errors)
    {
        if (Enrolment is null)
        {
            return;
        }
        CheckHttpUrl(Enrolment.ControllerUrl, PolicyLayout.ControllerUrl, errors);
        string id = Enrolment.EnrolmentId ?? "";
        if (string.IsNullOrWhiteSpace(id))
        {
            errors.Add($"{PolicyLayout.EnrolmentId}: must not be empty");
        }
        else if (id.Length > PolicyLimits.MaxEnrolmentIdLength)
        {
            errors.Add($"{PolicyLayout.EnrolmentId}: {id.Length} characters, at most {PolicyLimits.MaxEnrolmentIdLength}");
        }
        else if (id.Any(char.IsControl) || id.Trim().Length != id.Length)
        {
            errors.Add($"{PolicyLayout.EnrolmentId}: must not contain control characters or leading/trailing spaces");
        }
        if (!Enum.IsDefined(Enrolment.KeyStorage))
        {
            errors.Add($"{PolicyLayout.KeyStorageProvider}: {(int)Enrolment.KeyStorage} is not tpm or software");
        }
    }

    private void ValidateRuleSet(List<string> errors)
    {
        if (RuleSet is null)
        {
            return;
        }
        string location = RuleSet.Location ?? "";
        if (location.Length == 0 || location.Length > PolicyLimits.MaxRuleSetLocationLength)
        {
            errors.Add($"{PolicyLayout.RuleSetLocation}: must be 1 to {PolicyLimits.MaxRuleSetLocationLength} characters");
        }
        else if (!IsFullyQualifiedPath(location)
            && !(Uri.TryCreate(location, UriKind.Absolute, out var url) && url.Scheme == Uri.UriSchemeHttps && url.Host.Length > 0))
        {
            // Plain http would let anyone on the path serve an old, validly signed rule set.
            errors.Add($"{PolicyLayout.RuleSetLocation}: '{location}' is neither a fully qualified path, a UNC path nor an https:// URL");
        }
        ValidateSigner(RuleSet.SignerSpki ?? "", errors);
    }

    private static void ValidateSigner(string signer, List<string> errors)
    {
        const string name = PolicyLayout.RuleSetSigner;
        if (signer.Length == 0 || signer.Length > PolicyLimits.MaxSignerLength)
        {
            errors.Add($"{name}: must be 1 to {PolicyLimits.MaxSignerLength} base64 characters");
            return;
        }
        byte[] der = new byte[signer.Length];
        if (!Convert.TryFromBase64String(signer.Trim(), der, out int length))
        {
            errors.Add($"{name}: not valid base64 (give the body of a PEM PUBLIC KEY block, without its header lines)");
            return;
        }
        try
        {
            var key = PublicKey.CreateFromSubjectPublicKeyInfo(der.AsSpan(0, length), out int read);
            if (read != length)
            {
                errors.Add($"{name}: {length - read} bytes follow the SubjectPublicKeyInfo");
                return;
            }
            // Loading the key checks the point or modulus, not only the ASN.1 around it.
            switch (key.Oid.Value)
            {
                // Rule sets are signed with ECDSA P-256 only (SieveQ.Rules SignerKey): a policy pinning any other key
                // would be accepted here and then refuse every rule set, so it is refused here with the reason.
                case EcPublicKeyOid:
                    using (var ec = key.GetECDsaPublicKey())
                    {
                        var curve = ec?.ExportParameters(false).Curve.Oid;
                        if (curve?.Value != P256CurveOid && curve?.FriendlyName is not ("nistP256" or "ECDSA_P256" or "prime256v1" or "secp256r1"))
                        {
                            errors.Add($"{name}: ECDSA key on curve {curve?.FriendlyName ?? curve?.Value ?? "unknown"}; rule sets are signed with ECDSA P-256 (secp256r1) only");
                        }
                    }
                    break;
                case RsaPublicKeyOid:
                    errors.Add($"{name}: RSA key; rule sets are signed with ECDSA P-256 (secp256r1) only");
                    break;
                default:
                    errors.Add($"{name}: key algorithm {key.Oid.FriendlyName ?? key.Oid.Value} is not ECDSA P-256, the only one rule sets are signed with");
                    break;
            }
        }
        catch (CryptographicException e)
        {
            errors.Add($"{name}: not a DER SubjectPublicKeyInfo ({e.Message})");
        }
        catch (PlatformNotSupportedException e)
        {
            // An EC key naming a curve the platform's crypto does not know (OpenSSL on Linux) is refused this way.
            errors.Add($"{name}: a key this platform cannot load ({e.Message})");
        }
    }

    private void ValidateRateLimits(List<string> errors)
    {
        var r = DefaultRateLimits;
        if (r is null)
        {
            errors.Add("default rate limits: missing");
            return;
        }
        CheckRange(PolicyLayout.DefaultMessagesPerSecond, r.MessagesPerSecond, PolicyLimits.MaxMessagesPerSecond, errors);
        CheckRange(PolicyLayout.DefaultMessageBurst, r.MessageBurst, PolicyLimits.MaxMessageBurst, errors);
        CheckRange(PolicyLayout.DefaultConnectionsPerSecond, r.ConnectionsPerSecond, PolicyLimits.MaxConnectionsPerSecond, errors);
    }

    private void ValidateWhitelist(List<string> errors)
    {
        const string name = PolicyLayout.ApplicationWhitelistKey;
        if (ApplicationWhitelist.IsDefault)
        {
            errors.Add($"{name}: missing list");
            return;
        }
        if (ApplicationWhitelist.Length > PolicyLimits.MaxWhitelistEntries)
        {
            errors.Add($"{name}: {ApplicationWhitelist.Length} entries, at most {PolicyLimits.MaxWhitelistEntries} are allowed");
            return;
        }
        var seen = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        foreach (var entry in ApplicationWhitelist)
        {
            string path = entry.ImagePath ?? "";
            string where = $@"{name}\{path}";
            if (path.Length == 0 || path.Length > PolicyLimits.MaxImagePathLength)
            {
                errors.Add($"{name}: an image path must be 1 to {PolicyLimits.MaxImagePathLength} characters");
            }
            else if (!IsFullyQualifiedPath(path))
            {
                errors.Add($"{where}: the image path must be fully qualified (C:\\..., \\\\server\\share\\... or \\Device\\...)");
            }
            else if (!seen.Add(path))
            {
                errors.Add($"{where}: listed twice");
            }
            string hash = entry.Sha256 ?? "";
            if (hash.Length != 64 || !hash.All(char.IsAsciiHexDigit))
            {
                errors.Add($"{where}: '{Shorten(hash)}' is not a SHA-256 (64 hexadecimal digits)");
            }
        }
    }

    private static Uri? CheckHttpUrl(string? text, string where, List<string> errors)
    {
        text ??= "";
        if (text.Length == 0 || text.Length > PolicyLimits.MaxUrlLength)
        {
            errors.Add($"{where}: a URL must be 1 to {PolicyLimits.MaxUrlLength} characters");
            return null;
        }
        if (!Uri.TryCreate(text, UriKind.Absolute, out var url)
            || (url.Scheme != Uri.UriSchemeHttp && url.Scheme != Uri.UriSchemeHttps)
            || url.Host.Length == 0)
        {
            errors.Add($"{where}: '{Shorten(text)}' is not an absolute http:// or https:// URL");
            return null;
        }
        if (url.UserInfo.Length > 0)
        {
            // Credentials in a policy value would be readable by every user of the machine.
            errors.Add($"{where}: must not carry a user name or password");
            return null;
        }
        return url;
    }

    private static void CheckRange(string name, uint value, uint max, List<string> errors)
    {
        if (value < 1 || value > max)
        {
            errors.Add($"{name}: {value} is outside 1 to {max}");
        }
    }

    /// <summary>
    /// Windows forms are accepted on every OS: the layout comes from Windows Group Policy even when a file
    /// mirror of it is checked elsewhere.
    /// </summary>
    internal static bool IsFullyQualifiedPath(string path) =>
        (path.Length >= 3 && char.IsAsciiLetter(path[0]) && path[1] == ':' && path[2] == '\\')
        || (path.StartsWith(@"\\", StringComparison.Ordinal) && path.Length > 2)
        || path.StartsWith(@"\Device\", StringComparison.OrdinalIgnoreCase)
        || (!OperatingSystem.IsWindows() && path.StartsWith('/'));

    private static string Shorten(string text) => text.Length <= 80 ? text : text[..77] + "...";
}
