using System.Text;
using System.Text.Json;

namespace SieveQ.Policy;

/// <summary>
/// The JSON form of HKLM\SOFTWARE\Policies\SieveQ, for hosts without a registry:
/// <c>{"SOFTWARE\\Policies\\SieveQ": {"DriverMode": "audit", "PreSqEndpoints": {"1": "http://..."}}}</c>.
/// A JSON string is a REG_SZ, a JSON integer a REG_DWORD, a JSON object a subkey; nothing else exists in it,
/// so a file that parses here could have come out of the registry.
/// </summary>
public static class JsonPolicyMirror
{
    private static readonly JsonDocumentOptions ParseOptions = new()
    {
        // One level for the document, one for the root key, then the subkeys.
        MaxDepth = PolicyLimits.MaxKeyDepth + 2,
        CommentHandling = JsonCommentHandling.Skip,
        AllowTrailingCommas = true,
    };

    /// <summary>Parses a mirror; returns null and sets <paramref name="error"/> when it is not one.</summary>
    public static PolicyKey? Parse(ReadOnlyMemory<byte> utf8, out string? error)
    {
        ReadOnlySpan<byte> bom = [0xEF, 0xBB, 0xBF];
        if (utf8.Span.StartsWith(bom))
        {
            // Windows editors add it; the JSON reader does not accept it.
            utf8 = utf8[bom.Length..];
        }
        if (utf8.Span.Trim(" \t\r\n"u8).IsEmpty)
        {
            error = "the policy file is empty (truncated while being written?)";
            return null;
        }
        if (!System.Text.Unicode.Utf8.IsValid(utf8.Span))
        {
            // The JSON reader checks structure only; reading a name or string made of such bytes would throw later.
            error = "the policy file is not UTF-8 text (saved in another encoding?)";
            return null;
        }
        try
        {
            using var document = JsonDocument.Parse(utf8, ParseOptions);
            error = null;
            return ReadDocument(document.RootElement);
        }
        catch (JsonException e)
        {
            error = $"the policy file is not valid JSON: {e.Message}";
        }
        catch (MirrorException e)
        {
            error = e.Message;
        }
        return null;
    }

    /// <summary>Writes a key as a mirror document, values before subkeys, names in a stable order.</summary>
    public static string Write(PolicyKey root)
    {
        ArgumentNullException.ThrowIfNull(root);
        using var stream = new MemoryStream();
        using (var writer = new Utf8JsonWriter(stream, new JsonWriterOptions { Indented = true }))
        {
            writer.WriteStartObject();
            writer.WritePropertyName(PolicyLayout.RootKeyPath);
            WriteKey(writer, root);
            writer.WriteEndObject();
        }
        return Encoding.UTF8.GetString(stream.ToArray());
    }

    private static PolicyKey ReadDocument(JsonElement document)
    {
        if (document.ValueKind != JsonValueKind.Object)
        {
            throw new MirrorException($"the policy file must be a JSON object with one property \"{Escaped(PolicyLayout.RootKeyPath)}\"");
        }
        PolicyKey? root = null;
        foreach (var property in document.EnumerateObject())
        {
            if (!string.Equals(property.Name, PolicyLayout.RootKeyPath, StringComparison.OrdinalIgnoreCase))
            {
                throw new MirrorException($"top-level property \"{property.Name}\" is not \"{Escaped(PolicyLayout.RootKeyPath)}\" (the file mirrors that one registry key)");
            }
            if (root is not null)
            {
                throw new MirrorException($"\"{Escaped(PolicyLayout.RootKeyPath)}\" appears twice");
            }
            root = ReadKey(property.Value, PolicyLayout.RootKeyPath, depth: 0);
        }
        return root ?? throw new MirrorException($"the policy file has no \"{Escaped(PolicyLayout.RootKeyPath)}\" property");
    }

    private static PolicyKey ReadKey(JsonElement element, string path, int depth)
    {
        if (element.ValueKind != JsonValueKind.Object)
        {
            throw new MirrorException($@"{path}: a key must be a JSON object, found {element.ValueKind}");
        }
        var values = new Dictionary<string, PolicyValue>(StringComparer.OrdinalIgnoreCase);
        var subkeys = new Dictionary<string, PolicyKey>(StringComparer.OrdinalIgnoreCase);
        foreach (var property in element.EnumerateObject())
        {
            string name = property.Name;
            string where = $@"{path}\{name}";
            if (values.ContainsKey(name) || subkeys.ContainsKey(name))
            {
                // The registry cannot hold two names differing only in case; neither may its mirror.
                throw new MirrorException($"{where}: appears twice (names are compared without case, as in the registry)");
            }
            if (property.Value.ValueKind == JsonValueKind.Object)
            {
                if (depth + 1 >= PolicyLimits.MaxKeyDepth)
                {
                    throw new MirrorException($"{where}: keys nest deeper than {PolicyLimits.MaxKeyDepth} levels");
                }
                if (name.Length == 0 || name.Length > PolicyLimits.MaxKeyNameLength || name.Contains('\\', StringComparison.Ordinal))
                {
                    throw new MirrorException($"{where}: a key name must be 1 to {PolicyLimits.MaxKeyNameLength} characters without '\\'");
                }
                if (subkeys.Count == PolicyLimits.MaxSubkeysPerKey)
                {
                    throw new MirrorException($"{path}: more than {PolicyLimits.MaxSubkeysPerKey} subkeys");
                }
                subkeys.Add(name, ReadKey(property.Value, where, depth + 1));
                continue;
            }
            if (name.Length > PolicyLimits.MaxValueNameLength)
            {
                throw new MirrorException($"{path}: a value name is longer than {PolicyLimits.MaxValueNameLength} characters");
            }
            if (values.Count == PolicyLimits.MaxValuesPerKey)
            {
                throw new MirrorException($"{path}: more than {PolicyLimits.MaxValuesPerKey} values");
            }
            values.Add(name, ReadValue(property.Value, where));
        }
        return new PolicyKey(values, subkeys);
    }

    private static PolicyValue ReadValue(JsonElement element, string where)
    {
        switch (element.ValueKind)
        {
            case JsonValueKind.String:
                string text = element.GetString()!;
                if (text.Length > PolicyLimits.MaxStringValueLength)
                {
                    throw new MirrorException($"{where}: a string is longer than {PolicyLimits.MaxStringValueLength} characters");
                }
                return PolicyValue.String(text);
            case JsonValueKind.Number when element.TryGetUInt32(out uint number):
                return PolicyValue.DWord(number);
            case JsonValueKind.Number:
                throw new MirrorException($"{where}: {element.GetRawText()} is not an integer from 0 to 4294967295 (a REG_DWORD)");
            default:
                throw new MirrorException($"{where}: JSON {element.ValueKind.ToString().ToLowerInvariant()} has no registry equivalent (use a string, an integer or an object)");
        }
    }

    private static void WriteKey(Utf8JsonWriter writer, PolicyKey key)
    {
        writer.WriteStartObject();
        foreach (var (name, value) in key.Values.OrderBy(p => p.Key, StringComparer.OrdinalIgnoreCase))
        {
            switch (value.Kind)
            {
                case PolicyValueKind.String:
                    writer.WriteString(name, value.Text);
                    break;
                case PolicyValueKind.DWord:
                    writer.WriteNumber(name, value.Number);
                    break;
                default:
                    // A registry dump may hold REG_BINARY and the like; the mirror cannot express them, so they are left out.
                    break;
            }
        }
        foreach (var (name, subkey) in key.Subkeys.OrderBy(p => p.Key, StringComparer.OrdinalIgnoreCase))
        {
            writer.WritePropertyName(name);
            WriteKey(writer, subkey);
        }
        writer.WriteEndObject();
    }

    private static string Escaped(string name) => name.Replace(@"\", @"\\", StringComparison.Ordinal);

    private sealed class MirrorException(string message) : Exception(message);
}
