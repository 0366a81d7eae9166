using System.ComponentModel;
using Microsoft.Extensions.Logging;
using SieveQ.Firewall.Bridge;

namespace SieveQ.Firewall.Enforcement;

/// <summary>Which layer 0 this host has: sieveq.sys on Windows, the core in libsieveqfw.so elsewhere, or none.</summary>
public static class DriverBridgeSelection
{
    /// <summary>The bridge, or null and the reason it is not available (the agent then runs without a firewall).</summary>
    public static (IDriverBridge? Bridge, string? Unavailable) TryOpen(FirewallOptions options, ILoggerFactory logs)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(logs);
        if (OperatingSystem.IsWindows())
        {
            try
            {
                return (new WindowsDriverBridge(), null);
            }
            catch (Win32Exception e)
            {
                return (null, $"the SieveQFw driver is not loaded or not ours to open ({e.Message})");
            }
            catch (DriverInterfaceMismatchException e)
            {
                // Refused rather than run: the structures on the device would be read in the wrong layout.
                return (null, e.Message);
            }
        }
        string? library = options.CoreLibraryPath ?? CoreLibrary.Locate(AppContext.BaseDirectory, Environment.CurrentDirectory);
        if (library is null || !File.Exists(library))
        {
            return (null, $"libsieveqfw.so not found ({library ?? "set SIEVEQ_FW_LIBRARY or run make -C driver lib"})");
        }
        try
        {
            CoreLibrary.Use(library);
            return (new CoreDriverBridge(logs.CreateLogger<CoreDriverBridge>()), null);
        }
        catch (Exception e) when (e is DllNotFoundException or BadImageFormatException or EntryPointNotFoundException or InvalidOperationException)
        {
            return (null, $"{library} cannot be used: {e.Message}");
        }
    }
}
