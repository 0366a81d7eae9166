namespace SieveQ.AdminUi.Hosting;

/// <summary>The checks console.json's free-text settings share.</summary>
internal static class ConfigText
{
    /// <summary>1 to <paramref name="max"/> characters, none of them a control character.</summary>
    public static bool IsText(string? s, int max) => s is { Length: > 0 } && s.Length <= max && !s.Any(char.IsControl);
}
