using System.Runtime.InteropServices;
using System.Runtime.Versioning;

namespace SieveQ.Firewall.Identity;

/// <summary>
/// The two spellings of an image path. Policies name files as administrators write them
/// (C:\Program Files\...); WFP reports the NT device path (\device\harddiskvolume3\program files\...).
/// Off Windows both are the same POSIX path.
/// </summary>
public static partial class NtImagePath
{
    /// <summary>The path as the driver will see it in connect requests.</summary>
    public static string FromPolicyPath(string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        if (!OperatingSystem.IsWindows() || path.Length < 3 || path[1] != ':' || path[2] != '\\' || !char.IsAsciiLetter(path[0]))
        {
            return path;
        }
        return DeviceOf(path[..2]) is { } device ? device + path[2..] : path;
    }

    /// <summary>A path the file APIs can open for a path the driver reported.</summary>
    public static string ToOpenablePath(string driverPath)
    {
        ArgumentNullException.ThrowIfNull(driverPath);
        // Win32 reaches the NT namespace through \\?\GLOBALROOT, so no reverse drive-letter lookup is needed.
        return OperatingSystem.IsWindows() && driverPath.StartsWith(@"\device\", StringComparison.OrdinalIgnoreCase)
            ? @"\\?\GLOBALROOT" + driverPath
            : driverPath;
    }

    [SupportedOSPlatform("windows")]
    private static unsafe string? DeviceOf(string drive)
    {
        char* buffer = stackalloc char[1024];
        uint n = QueryDosDeviceW(drive, buffer, 1024);
        // The first string of the returned list is the current mapping.
        return n == 0 ? null : new string(buffer);
    }

    [LibraryImport("kernel32.dll", SetLastError = true, StringMarshalling = StringMarshalling.Utf16)]
    [SupportedOSPlatform("windows")]
    private static unsafe partial uint QueryDosDeviceW(string deviceName, char* targetPath, uint max);
}
