using System.Diagnostics;
using SieveQ.Firewall.Bridge;

namespace SieveQ.Firewall.Tests;

/// <summary>
/// Locates driver/ in the repository, builds libsieveqfw.so with make when it is missing, and
/// points the bridge at it, so these tests always run the real C core.
/// </summary>
public static class NativeLibraryFixture
{
    private static readonly Lazy<string> DriverDir = new(FindDriverDir);
    private static readonly Lazy<string> Library = new(BuildLibrary);

    public static string DriverDirectory => DriverDir.Value;
    public static string GoldenDirectory => Path.Combine(DriverDir.Value, "golden");

    public static void EnsureLoaded() => NativeCore.UseLibrary(Library.Value);

    /// <summary>The built libsieveqfw.so (built on first use).</summary>
    public static string LibraryPath => Library.Value;

    private static string FindDriverDir()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            string candidate = Path.Combine(dir.FullName, "driver", "Makefile");
            if (File.Exists(candidate))
            {
                return Path.Combine(dir.FullName, "driver");
            }
        }
        throw new InvalidOperationException("driver/Makefile not found above " + AppContext.BaseDirectory);
    }

    private static string BuildLibrary()
    {
        string lib = Path.Combine(DriverDir.Value, "build", "libsieveqfw.so");
        // Always ask make: it rebuilds only when a core source changed, so a stale library never gets tested.
        {
            using var make = Process.Start(new ProcessStartInfo("make", $"-C \"{DriverDir.Value}\" lib")
            {
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            }) ?? throw new InvalidOperationException("cannot start make");
            string output = make.StandardOutput.ReadToEnd() + make.StandardError.ReadToEnd();
            make.WaitForExit();
            if (make.ExitCode != 0 || !File.Exists(lib))
            {
                throw new InvalidOperationException("make -C driver lib failed:\n" + output);
            }
        }
        return lib;
    }
}
