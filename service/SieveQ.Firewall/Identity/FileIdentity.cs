using System.Runtime.InteropServices;

namespace SieveQ.Firewall.Identity;

/// <summary>
/// Which file an image path names right now, and when it last changed: device + inode and ctime on
/// Linux, volume + file index and last write on Windows. A replaced binary gets a new identity even
/// when size and modification time were forged.
/// </summary>
public readonly record struct FileIdentity(ulong Device, ulong FileId, long ChangeTicks, long Length);

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
        // Elsewhere (and until the Windows file-id path is needed) fall back to what .NET exposes.
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
}
