using System.Diagnostics;

namespace SieveQ.Tests.Shared;

/// <summary>
/// Finds driver/ above the test binaries and builds libsieveqfw.so with make, so tests always run the
/// real C core. Always asks make: it rebuilds only when a core source changed, so a stale library is
/// never tested. Linked into every test project that needs the core.
/// </summary>
internal static class DriverLibrary
{
    private static readonly Lazy<string> DriverDir = new(FindDriverDir);
    private static readonly Lazy<string> Library = new(Build);

    public static string DriverDirectory => DriverDir.Value;

    /// <summary>The built libsieveqfw.so (built on first use).</summary>
    public static string LibraryPath => Library.Value;

    private static string FindDriverDir()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "driver", "Makefile")))
            {
                return Path.Combine(dir.FullName, "driver");
            }
        }
        throw new InvalidOperationException("driver/Makefile not found above " + AppContext.BaseDirectory);
    }

    private static string Build()
    {
        string lib = Path.Combine(DriverDir.Value, "build", "libsieveqfw.so");
        using var make = Process.Start(new ProcessStartInfo("make", ["-C", DriverDir.Value, "lib"])
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
        return lib;
    }
}
