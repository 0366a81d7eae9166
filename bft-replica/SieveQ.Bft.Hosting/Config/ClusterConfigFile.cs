using System.Text.Json;
using System.Text.Json.Serialization;

namespace SieveQ.Bft.Hosting.Config;

/// <summary>Reads and writes the cluster configuration as indented camelCase JSON.</summary>
public static class ClusterConfigFile
{
    private static readonly JsonSerializerOptions Options = new()
    {
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        WriteIndented = true,
        DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull,
        ReadCommentHandling = JsonCommentHandling.Skip,
        AllowTrailingCommas = true,
    };

    public static ClusterConfig Load(string path)
    {
        var full = Path.GetFullPath(path);
        var cfg = JsonSerializer.Deserialize<ClusterConfig>(File.ReadAllText(full), Options)
            ?? throw new InvalidDataException($"{path}: empty cluster config");
        cfg = cfg with { BaseDirectory = Path.GetDirectoryName(full)! };
        cfg.Validate();
        return cfg;
    }

    public static void Save(ClusterConfig config, string path) =>
        File.WriteAllText(path, JsonSerializer.Serialize(config, Options));
}
