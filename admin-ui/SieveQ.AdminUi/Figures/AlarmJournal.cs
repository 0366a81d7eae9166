using System.Text.Json;
using SieveQ.AdminUi.Hosting;

namespace SieveQ.AdminUi.Figures;

/// <summary>An operator's acknowledgement of an open alarm: who took it on, when, why, and the controller's audit record of it.</summary>
public sealed record AlarmAcknowledgement(string By, DateTimeOffset At, string Reason, long AuditSequence);

/// <summary>One condition the console has seen and not yet seen clear: its key, when first seen, and its acknowledgement if any.</summary>
public sealed record AlarmJournalEntry(string Key, DateTimeOffset Since, AlarmAcknowledgement? Acknowledged);

/// <summary>
/// The alarm book's memory on disk (<c>console/alarms.json</c>): the first-seen time of every open condition and its
/// acknowledgement, so a console restart neither makes every alarm new again nor forgets who took one on. Written
/// whole to a temporary file and renamed over, readable by the console's account only. A file that is too large or
/// malformed is set aside (renamed with <c>.bad</c>) and the book starts empty: a damaged journal must not keep the
/// console from showing what is wrong now.
/// </summary>
public sealed class AlarmJournal(string path)
{
    /// <summary>Conditions kept: well above what one deployment's components can raise at once.</summary>
    public const int MaxEntries = 1_000;

    public const long MaxFileBytes = 1L << 20;

    /// <summary>An alarm key: what <see cref="AlarmConditions"/> builds from component names and audit numbers.</summary>
    public const int MaxKeyLength = 200;

    public string Path { get; } = path;

    /// <summary>The entries on disk; none when the file is missing or was set aside (<paramref name="problem"/> says why).</summary>
    public IReadOnlyList<AlarmJournalEntry> Load(out string? problem)
    {
        var entries = SetAsideJsonList.Load<AlarmJournalEntry>(Path, MaxFileBytes, Validate, out problem);
        if (problem is not null)
        {
            problem = $"{problem}; set aside as {Path}.bad, alarms start from what is seen now";
        }
        return entries;
    }

    public void Save(IReadOnlyCollection<AlarmJournalEntry> entries)
    {
        ArgumentNullException.ThrowIfNull(entries);
        using (var file = OwnerOnlyFile.CreateTemporary(Path))
        {
            JsonSerializer.Serialize(file, entries, ConsoleConfig.Options);
            file.Flush(flushToDisk: true);
        }
        OwnerOnlyFile.Commit(Path);
    }

    private static void Validate(List<AlarmJournalEntry> entries)
    {
        if (entries.Count > MaxEntries)
        {
            throw new InvalidDataException($"{entries.Count} entries, more than {MaxEntries}");
        }
        var keys = new HashSet<string>(StringComparer.Ordinal);
        foreach (var e in entries)
        {
            if (e is null || !IsValidKey(e.Key) || !keys.Add(e.Key))
            {
                throw new InvalidDataException("an entry without a valid key, or a key twice");
            }
            if (e.Acknowledged is { } a && (a.By is null || a.By.Length is 0 or > 200 || a.Reason is null || a.Reason.Length > 200
                || a.By.Any(char.IsControl) || a.Reason.Any(char.IsControl) || a.AuditSequence < 0))
            {
                throw new InvalidDataException($"the acknowledgement of {e.Key} is malformed");
            }
        }
    }

    public static bool IsValidKey(string? key) => key is { Length: > 0 and <= MaxKeyLength } && !key.Any(char.IsControl);
}
