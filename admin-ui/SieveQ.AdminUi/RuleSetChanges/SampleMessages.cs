using System.Globalization;
using System.Text;
using Google.Protobuf;
using SieveQ.Protocol.V1;

namespace SieveQ.AdminUi.RuleSetChanges;

/// <summary>
/// The dry run's sample messages as an operator types them, one a line: <c>SENDER RECEIVER PAYLOAD</c>, the payload
/// as text, or as <c>base64:...</c> for binary protocols. Blank lines and lines starting with # are skipped.
/// </summary>
public static class SampleMessages
{
    public const int MaxSamples = Controller.RuleSets.RuleSetDryRun.MaxSamples;
    public const int MaxTextLength = 64 * 1024;

    /// <summary>The samples, or why the text is not a list of them (with the line).</summary>
    public static (IReadOnlyList<RuleSetSample> Samples, string? Error) Parse(string? text)
    {
        var samples = new List<RuleSetSample>();
        text ??= "";
        if (text.Length > MaxTextLength)
        {
            return ([], $"the samples are {text.Length} characters; at most {MaxTextLength}");
        }
        var lines = text.Split('\n');
        for (var i = 0; i < lines.Length; i++)
        {
            var line = lines[i].TrimEnd('\r');
            if (line.Trim().Length == 0 || line.TrimStart().StartsWith('#'))
            {
                continue;
            }
            var parts = line.Trim().Split(' ', 3, StringSplitOptions.RemoveEmptyEntries);
            if (parts.Length < 2 || !uint.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out var sender) || sender > int.MaxValue
                || !uint.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out var receiver) || receiver > int.MaxValue)
            {
                return ([], $"line {i + 1}: expected SENDER RECEIVER PAYLOAD (two ids, then the payload as text or base64:...)");
            }
            var payload = parts.Length == 3 ? parts[2] : "";
            byte[] bytes;
            if (payload.StartsWith("base64:", StringComparison.Ordinal))
            {
                try
                {
                    bytes = Convert.FromBase64String(payload["base64:".Length..]);
                }
                catch (FormatException)
                {
                    return ([], $"line {i + 1}: the payload after base64: is not base64");
                }
            }
            else
            {
                bytes = Encoding.UTF8.GetBytes(payload);
            }
            if (samples.Count == MaxSamples)
            {
                return ([], $"more than {MaxSamples} samples");
            }
            samples.Add(new RuleSetSample { Sender = sender, Receiver = receiver, Payload = ByteString.CopyFrom(bytes) });
        }
        return (samples, null);
    }
}
