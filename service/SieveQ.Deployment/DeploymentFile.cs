using System.Text.Json;
using System.Text.Json.Serialization;

namespace SieveQ.Deployment;

/// <summary>Reads and writes <c>deployment.json</c> (indented camelCase; comments and trailing commas tolerated on read).</summary>
public static class DeploymentFile
{
    public const string FileName = "deployment.json";
    private const long MaxBytes = 4 * 1024 * 1024;

    private static readonly JsonSerializerOptions Options = new()
    {
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        WriteIndented = true,
        ReadCommentHandling = JsonCommentHandling.Skip,
        AllowTrailingCommas = true,
        UnmappedMemberHandling = JsonUnmappedMemberHandling.Disallow,
    };

    /// <summary>Accepts the file or the directory holding it.</summary>
    public static DeploymentConfig Load(string path)
    {
        var full = Path.GetFullPath(Directory.Exists(path) ? Path.Combine(path, FileName) : path);
        var cfg = BoundedJsonFile.Read<DeploymentConfig>(full, MaxBytes, Options, "no deployment file (create one with `sieveq deploy init`)");
        if (cfg is null)
        {
            throw new DeploymentException($"{full}: empty deployment file");
        }
        cfg = cfg with { BaseDirectory = Path.GetDirectoryName(full)! };
        cfg.Validate();
        return cfg;
    }

    public static void Save(DeploymentConfig config, string path)
    {
        ArgumentNullException.ThrowIfNull(config);
        var tmp = path + ".tmp";
        File.WriteAllText(tmp, JsonSerializer.Serialize(config, Options));
        File.Move(tmp, path, overwrite: true);
    }
}
