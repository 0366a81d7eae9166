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
        if (!OperatingSystem.IsWindows() || !driverPath.StartsWith(@"\device\", StringComparison.OrdinalIgnoreCase))
        {
            return driverPath;
        }
        // Win32 reaches the NT namespace through \\?\GLOBALROOT, so no reverse drive-letter lookup is needed there;
        // a host without GLOBALROOT (Wine 8.0) gets the drive letter whose device the path is on.
        string global = @"\\?\GLOBALROOT" + driverPath;
        return File.Exists(global) ? global : ByDriveLetter(driverPath) ?? global;
    }

    [SupportedOSPlatform("windows")]
    private static string? ByDriveLetter(string driverPath)
    {
        foreach (string root in Environment.GetLogicalDrives())
        {
            string drive = root[..2];
            if (DeviceOf(drive) is { } device && driverPath.Length > device.Length && driverPath[device.Length] == '\\' &&
                driverPath.StartsWith(device, StringComparison.OrdinalIgnoreCase))
            {
                return drive + driverPath[device.Length..];
            }
        }
        return null;
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
