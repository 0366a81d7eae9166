using System.Text.Json;

namespace SieveQ.AdminUi.Hosting;

/// <summary>
/// The console's own state files that it can start without (alarm journal, provider logouts): a JSON list read whole,
/// size-checked first; a file that is too large, not JSON or refused by the caller's check is renamed to
/// <c>PATH.bad</c> (kept for a look, never read again) and the caller starts from nothing, saying what that means.
/// </summary>
internal static class SetAsideJsonList
{
    /// <param name="validate">Throws <see cref="InvalidDataException"/> for a list the caller cannot take.</param>
    /// <param name="problem">Why the file was set aside ("PATH: reason"), or null.</param>
    public static List<T> Load<T>(string path, long maxBytes, Action<List<T>> validate, out string? problem)
    {
        problem = null;
        if (!File.Exists(path))
        {
            return [];
        }
        try
        {
            if (new FileInfo(path).Length > maxBytes)
            {
                throw new InvalidDataException($"larger than {maxBytes} bytes");
            }
            var entries = JsonSerializer.Deserialize<List<T>>(File.ReadAllText(path), ConsoleConfig.Options)
                ?? throw new InvalidDataException("null instead of a list");
            validate(entries);
            return entries;
        }
        catch (Exception e) when (e is JsonException or InvalidDataException or NotSupportedException)
        {
            problem = $"{path}: {e.Message}";
            File.Move(path, path + ".bad", overwrite: true);
            return [];
        }
    }
}
