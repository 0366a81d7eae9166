using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using Microsoft.Win32.SafeHandles;

namespace SieveQ.Firewall.Identity;

/// <summary>
/// Which file an image path names right now, and when it last changed: device + inode and ctime on
/// Linux, volume serial + file index and change time on Windows. A replaced binary gets a new identity
/// even when size and modification time were forged.
/// </summary>
public readonly record struct FileIdentity(ulong Device, ulong FileId, long ChangeTicks, long Length);

/// <summary>
/// The file a process mapped as its image, named the way <see cref="FileIdentity"/> names files (volume serial and
/// file index on Windows, device and inode on Linux). A file mapped for execution cannot be written, so the same
/// file is the same content.
/// </summary>
public readonly record struct MappedImage(ulong Volume, ulong FileId)
{
    public bool Names(FileIdentity file) => file.Device == Volume && file.FileId == FileId;
}

public interface IFileIdentitySource
{
    FileIdentity Read(string path);
}

public sealed partial class PlatformFileIdentitySource : IFileIdentitySource
{
    public FileIdentity Read(string path)
    {
        if (OperatingSystem.IsLinux() && RuntimeInformation.ProcessArchitecture == Architecture.X64)
        {
            return ReadLinuxX64(path);
        }
        if (OperatingSystem.IsWindows())
        {
            return ReadWindows(path);
        }
        // Elsewhere (macOS, other Linux ABIs) only what .NET exposes: weaker, a forged mtime goes unseen.
        var info = new FileInfo(path);
        if (!info.Exists)
        {
            throw new FileNotFoundException("image not found", path);
        }
        return new FileIdentity(0, (ulong)path.GetHashCode(StringComparison.Ordinal), info.LastWriteTimeUtc.Ticks, info.Length);
    }

    // glibc x86_64 struct stat: st_dev @0, st_ino @8, st_size @48, st_ctim @104 (tv_sec, tv_nsec); 144 bytes.
    [LibraryImport("libc", EntryPoint = "stat", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static unsafe partial int Stat(string path, byte* buffer);

    private static unsafe FileIdentity ReadLinuxX64(string path)
    {
        byte* buf = stackalloc byte[256];
        if (Stat(path, buf) != 0)
        {
            int errno = Marshal.GetLastPInvokeError();
            throw new FileNotFoundException($"stat failed (errno {errno})", path);
        }
        ulong dev = *(ulong*)buf;
        ulong ino = *(ulong*)(buf + 8);
        long size = *(long*)(buf + 48);
        long ctimeSec = *(long*)(buf + 104);
        long ctimeNsec = *(long*)(buf + 112);
        return new FileIdentity(dev, ino, ctimeSec * TimeSpan.TicksPerSecond + ctimeNsec / 100, size);
    }

    // BY_HANDLE_FILE_INFORMATION (52 bytes): attributes @0, creation @4, access @12, write @20,
    // volume serial @28, size high @32, size low @36, links @40, index high @44, index low @48.
    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    [SupportedOSPlatform("windows")]
    private static unsafe partial bool GetFileInformationByHandle(SafeFileHandle file, byte* info);

    // FILE_BASIC_INFO (class 0, 40 bytes): creation @0, access @8, write @16, change @24, attributes @32.
    // ChangeTime moves on any metadata or data change and, unlike LastWriteTime, SetFileTime cannot set it.
    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    [SupportedOSPlatform("windows")]
    private static unsafe partial bool GetFileInformationByHandleEx(SafeFileHandle file, int infoClass, byte* info, uint size);

    [SupportedOSPlatform("windows")]
    private static unsafe FileIdentity ReadWindows(string path)
    {
        // Read sharing only for the query: a writer or renamer may hold the file, it must not be blocked.
        using SafeFileHandle file = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
        byte* info = stackalloc byte[64];
        byte* basic = stackalloc byte[64];
        if (!GetFileInformationByHandle(file, info) || !GetFileInformationByHandleEx(file, 0, basic, 40))
        {
            throw new IOException($"cannot read the file identity of {path} (error {Marshal.GetLastPInvokeError()})");
        }
        uint volume = *(uint*)(info + 28);
        ulong length = ((ulong)*(uint*)(info + 32) << 32) | *(uint*)(info + 36);
        ulong index = ((ulong)*(uint*)(info + 44) << 32) | *(uint*)(info + 48);
        long change = *(long*)(basic + 24);
        return new FileIdentity(volume, index, change, (long)length);
    }
}
