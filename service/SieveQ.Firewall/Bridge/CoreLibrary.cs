namespace SieveQ.Firewall.Bridge;

/// <summary>Where libsieveqfw.so comes from: an explicit path, $SIEVEQ_FW_LIBRARY, or driver/build in a checkout.</summary>
public static class CoreLibrary
{
    public static void Use(string path) => NativeCore.UseLibrary(path);

    /// <summary>Looks for driver/build/libsieveqfw.so above the given directories (a source checkout).</summary>
    public static string? Locate(params string[] startDirectories)
    {
        string? fromEnv = Environment.GetEnvironmentVariable("SIEVEQ_FW_LIBRARY");
        if (fromEnv is not null && File.Exists(fromEnv))
        {
            return fromEnv;
        }
        foreach (string start in startDirectories)
        {
            for (var dir = new DirectoryInfo(start); dir is not null; dir = dir.Parent)
            {
                string candidate = Path.Combine(dir.FullName, "driver", "build", "libsieveqfw.so");
                if (File.Exists(candidate))
                {
                    return candidate;
                }
            }
        }
        return null;
    }
}
