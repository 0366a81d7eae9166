using SieveQ.Rules;

namespace SieveQ.Controller.RuleSets;

/// <summary>
/// The canonical form of the rule sets this controller knows by version (the deployment's initial one and every one it
/// pushed), so the console can diff an upload against the running version: the replicas report versions, not documents.
/// One file per version, the newest <see cref="MaxVersions"/> kept.
/// </summary>
public sealed class RuleSetArchive
{
    public const int MaxVersions = 16;

    private readonly string _directory;
    private readonly Lock _gate = new();

    public RuleSetArchive(string directory)
    {
        ArgumentException.ThrowIfNullOrEmpty(directory);
        _directory = directory;
        Directory.CreateDirectory(directory);
    }

    public int Count => Files().Count;

    public void Keep(CompiledRuleSet ruleSet)
    {
        ArgumentNullException.ThrowIfNull(ruleSet);
        lock (_gate)
        {
            var path = PathOf(ruleSet.Version);
            var temp = path + ".tmp";
            File.WriteAllBytes(temp, ruleSet.Document.CanonicalBytes);
            File.Move(temp, path, overwrite: true);
            foreach (var old in Files().OrderByDescending(f => f.Version).Skip(MaxVersions))
            {
                File.Delete(old.Path);
            }
        }
    }

    /// <summary>The canonical JSON of <paramref name="version"/>, or null when this controller never had it.</summary>
    public string? Canonical(int version)
    {
        lock (_gate)
        {
            var path = PathOf(version);
            return File.Exists(path) && new FileInfo(path).Length <= RuleSetCheck.MaxDocumentBytes * 2 ? File.ReadAllText(path) : null;
        }
    }

    private string PathOf(int version) => Path.Combine(_directory, $"v{version}.json");

    private List<(int Version, string Path)> Files() =>
        Directory.EnumerateFiles(_directory, "v*.json")
            .Select(p => (Ok: int.TryParse(Path.GetFileNameWithoutExtension(p).AsSpan(1), System.Globalization.CultureInfo.InvariantCulture, out var v), Version: v, Path: p))
            .Where(f => f.Ok).Select(f => (f.Version, f.Path)).ToList();
}
