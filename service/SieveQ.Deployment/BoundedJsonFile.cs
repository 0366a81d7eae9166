using System.Text.Json;

namespace SieveQ.Deployment;

/// <summary>The one way configuration files are read: size-checked before reading, every failure a <see cref="DeploymentException"/> naming the file.</summary>
public static class BoundedJsonFile
{
    /// <param name="missing">Why the file is absent and what creates it, after the path.</param>
    public static T? Read<T>(string path, long maxBytes, JsonSerializerOptions options, string missing)
    {
        if (!File.Exists(path))
        {
            throw new DeploymentException($"{path}: {missing}");
        }
        if (new FileInfo(path).Length > maxBytes)
        {
            throw new DeploymentException($"{path}: larger than {maxBytes} bytes");
        }
        try
        {
            return JsonSerializer.Deserialize<T>(File.ReadAllText(path), options);
        }
        catch (JsonException e)
        {
            throw new DeploymentException($"{path}: {e.Message}", e);
        }
    }
}
