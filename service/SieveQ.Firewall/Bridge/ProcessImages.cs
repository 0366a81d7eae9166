using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using System.Text;
using Microsoft.Win32.SafeHandles;

namespace SieveQ.Firewall.Bridge;

/// <summary>
/// The full image path of a process the driver named by a truncated path: the event carries 256 bytes of it, an
/// NT path may be far longer, and the hash must be of the process's own image.
/// </summary>
[SupportedOSPlatform("windows")]
internal static unsafe partial class ProcessImages
{
    private const uint ProcessQueryLimitedInformation = 0x1000;
    private const uint ProcessNameNative = 1;

    /// <summary>
    /// The NT image path of pid, when that process is still the one the driver keyed (its creation time gives the
    /// same key, so a reused pid is not taken for it) and the path starts with what the driver sent; else null.
    /// </summary>
    public static string? TryGetFullImagePath(uint pid, ulong expectedKey, ReadOnlySpan<byte> prefix, Func<uint, long, ulong> processKey)
    {
        using SafeProcessHandle process = OpenProcess(ProcessQueryLimitedInformation, false, pid);
        if (process.IsInvalid)
        {
            return null;
        }
        if (!GetProcessTimes(process, out long created, out _, out _, out _) || processKey(pid, created) != expectedKey)
        {
            return null;
        }
        var name = new char[32768];
        uint length = (uint)name.Length;
        fixed (char* buffer = name)
        {
            if (!QueryFullProcessImageNameW(process, ProcessNameNative, buffer, ref length))
            {
                return null;
            }
        }
        string path = new(name, 0, (int)length);
        return Extends(path, prefix) ? path : null;
    }

    /// <summary>
    /// path is longer than prefix (the driver cut it) and starts with it, ASCII letters compared without case as
    /// the driver compares image paths.
    /// </summary>
    internal static bool Extends(string path, ReadOnlySpan<byte> prefix)
    {
        byte[] bytes = Encoding.UTF8.GetBytes(path);
        if (bytes.Length <= prefix.Length)
        {
            return false;
        }
        for (int i = 0; i < prefix.Length; i++)
        {
            if (Fold(bytes[i]) != Fold(prefix[i]))
            {
                return false;
            }
        }
        return true;
    }

    private static byte Fold(byte b) => b is >= (byte)'A' and <= (byte)'Z' ? (byte)(b | 0x20) : b;

    [LibraryImport("kernel32.dll", SetLastError = true)]
    private static partial SafeProcessHandle OpenProcess(uint access, [MarshalAs(UnmanagedType.Bool)] bool inherit, uint pid);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static partial bool GetProcessTimes(SafeProcessHandle process, out long creation, out long exit, out long kernel, out long user);

    [LibraryImport("kernel32.dll", SetLastError = true, EntryPoint = "QueryFullProcessImageNameW")]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static partial bool QueryFullProcessImageNameW(SafeProcessHandle process, uint flags, char* name, ref uint size);
}
