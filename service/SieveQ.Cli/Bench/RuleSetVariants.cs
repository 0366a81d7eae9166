using System.Text.Json;
using System.Text.Json.Nodes;
using SieveQ.Rules;

namespace SieveQ.Cli.Bench;

/// <summary>
/// The two rule sets `bench e2e --rules` alternates in one deployment: the operator's document, and the
/// same document without content matching, so the difference between them is the string matching the
/// paper measured (section 6.4) and nothing else. Each push needs a higher version, so both are
/// re-versioned per phase.
/// </summary>
internal static class RuleSetVariants
{
    /// <summary>
    /// The document with its pattern sets gone: allow rules lose their <c>rejectPatterns</c>, and deny rules
    /// that deny only on a pattern hit (<c>contains</c>) are dropped, since without patterns they never fire.
    /// Routes, sizes, formats, rates, flows, windows and quarantine stay as they were.
    /// </summary>
    public static byte[] WithoutPatterns(byte[] json)
    {
        var doc = Parse(json);
        doc.Remove("patternSets");
        if (doc["rules"] is JsonArray rules)
        {
            for (var i = rules.Count - 1; i >= 0; i--)
            {
                if (rules[i] is not JsonObject rule)
                {
                    continue;
                }
                if (rule.ContainsKey("contains"))
                {
                    rules.RemoveAt(i);
                    continue;
                }
                rule.Remove("rejectPatterns");
            }
        }
        doc["name"] = $"{doc["name"]?.GetValue<string>() ?? "rule set"} without patterns";
        return Compiled(doc, "the rule set without its patterns");
    }

    /// <summary>The document with <c>version</c> set, checked to compile.</summary>
    public static byte[] WithVersion(byte[] json, int version)
    {
        var doc = Parse(json);
        doc["version"] = version;
        return Compiled(doc, $"version {version}");
    }

    private static JsonObject Parse(byte[] json)
    {
        try
        {
            return JsonNode.Parse(json) as JsonObject ?? throw new RuleSetException(RuleSetErrorKind.Schema, "", "a rule set is a JSON object");
        }
        catch (JsonException e)
        {
            throw new RuleSetException(RuleSetErrorKind.Schema, "", $"not JSON: {e.Message}");
        }
    }

    private static byte[] Compiled(JsonObject doc, string what)
    {
        var bytes = JsonSerializer.SerializeToUtf8Bytes(doc);
        try
        {
            RuleSetLoader.CompileUnsigned(bytes);
        }
        catch (RuleSetException e)
        {
            throw new RuleSetException(e.Kind, e.Path, $"{what} does not compile: {e.Detail ?? e.Message}");
        }
        return bytes;
    }
}
