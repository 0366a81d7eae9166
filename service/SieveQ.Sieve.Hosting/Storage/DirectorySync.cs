using System.Runtime.InteropServices;

namespace SieveQ.Sieve.Hosting.Storage;

/// <summary>
/// Makes a rename durable: on Linux and macOS a rename is in the directory, which must be fsynced itself
/// or a crash may bring back the old name. .NET opens no handle on a directory, so this calls libc. On
/// Windows, NTFS journals the rename (MoveFileEx) and there is nothing to do.
/// </summary>
public static partial class DirectorySync
{
    private const int ReadOnly = 0;

    /// <exception cref="IOException">The directory could not be opened or flushed.</exception>
    public static void Flush(string directory)
    {
        ArgumentException.ThrowIfNullOrEmpty(directory);
        if (OperatingSystem.IsWindows())
        {
            return;
        }
        var fd = Open(directory, ReadOnly);
        if (fd < 0)
        {
            throw new IOException($"cannot open directory {directory} to flush it (errno {Marshal.GetLastPInvokeError()})");
        }
        try
        {
            if (Fsync(fd) != 0)
            {
                throw new IOException($"cannot flush directory {directory} (errno {Marshal.GetLastPInvokeError()})");
            }
        }
        finally
        {
            _ = Close(fd);
        }
    }

    [LibraryImport("libc", EntryPoint = "open", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int Open(string path, int flags);

    [LibraryImport("libc", EntryPoint = "fsync", SetLastError = true)]
    private static partial int Fsync(int fd);

    [LibraryImport("libc", EntryPoint = "close", SetLastError = true)]
    private static partial int Close(int fd);
}
