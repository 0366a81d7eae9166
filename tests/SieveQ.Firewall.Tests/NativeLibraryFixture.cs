using SieveQ.Firewall.Bridge;
using SieveQ.Tests.Shared;

namespace SieveQ.Firewall.Tests;

/// <summary>Points the bridge at the real libsieveqfw.so (built by <see cref="DriverLibrary"/>).</summary>
public static class NativeLibraryFixture
{
    public static string DriverDirectory => DriverLibrary.DriverDirectory;
    public static string GoldenDirectory => Path.Combine(DriverLibrary.DriverDirectory, "golden");

    public static void EnsureLoaded() => NativeCore.UseLibrary(DriverLibrary.LibraryPath);

    /// <summary>The built libsieveqfw.so (built on first use).</summary>
    public static string LibraryPath => DriverLibrary.LibraryPath;
}
