using System.Security.Cryptography;
using System.Text;

namespace SieveQ.Policy;

/// <summary>The effective policy as an operator reads it (<c>sieveq policy show</c>).</summary>
public static class PolicyText
{
    public static string Describe(AgentPolicy policy)
    {
        ArgumentNullException.ThrowIfNull(policy);
        var text = new StringBuilder();
        Line(text, $"driver mode: {PolicyLayout.Name(policy.DriverMode)}");
        var r = policy.DefaultRateLimits;
        Line(text, $"default rate limits: {r.MessagesPerSecond} messages/s, burst {r.MessageBurst}, {r.ConnectionsPerSecond} connections/s");
        Line(text, $"boot-time filters: {(policy.BootTimeFilters ? "on" : "off")}");
        Line(text, policy.Enrolment is { } e
            ? $"enrolment: controller {e.ControllerUrl}, id {e.EnrolmentId}, key storage {PolicyLayout.Name(e.KeyStorage)}"
            : "enrolment: not configured");
        Line(text, policy.RuleSet is { } rs
            ? $"rule set: {rs.Location}, signer {SignerFingerprint(rs.SignerSpki)}"
            : "rule set: not configured");
        Line(text, policy.PreSqEndpoints.IsDefaultOrEmpty
            ? "pre-SQ endpoints: not configured (the ones from enrolment)"
            : $"pre-SQ endpoints: {policy.PreSqEndpoints.Length}");
        foreach (string url in policy.PreSqEndpoints.IsDefault ? [] : policy.PreSqEndpoints)
        {
            Line(text, "  " + url);
        }
        Line(text, policy.ApplicationWhitelist.IsDefaultOrEmpty
            ? "application whitelist: not configured"
            : $"application whitelist: {policy.ApplicationWhitelist.Length} entries");
        foreach (var entry in policy.ApplicationWhitelist.IsDefault ? [] : policy.ApplicationWhitelist)
        {
            Line(text, $"  {entry.ImagePath}  sha256 {entry.Sha256.ToLowerInvariant()}");
        }
        return text.ToString();
    }

    /// <summary>What operators compare with the key they hold: SHA-256 of the DER SubjectPublicKeyInfo.</summary>
    public static string SignerFingerprint(string base64Spki)
    {
        ArgumentNullException.ThrowIfNull(base64Spki);
        try
        {
            return "spki-sha256:" + Convert.ToHexStringLower(SHA256.HashData(Convert.FromBase64String(base64Spki)));
        }
        catch (FormatException)
        {
            return "(not base64)";
        }
    }

    private static void Line(StringBuilder text, string line) => text.Append(line).Append('\n');
}
