namespace SieveQ.Rules.Json;

/// <summary>RFC 6901 pointers, the paths every rule-set error names.</summary>
public static class JsonPointer
{
    public static string Append(string parent, string member) =>
        parent + "/" + member.Replace("~", "~0", StringComparison.Ordinal).Replace("/", "~1", StringComparison.Ordinal);

    public static string Append(string parent, int index) =>
        parent + "/" + index.ToString(System.Globalization.CultureInfo.InvariantCulture);
}
