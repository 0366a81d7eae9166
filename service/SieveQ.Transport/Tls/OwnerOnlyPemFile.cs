namespace SieveQ.Transport.Tls;

/// <summary>
/// A private key on disk: created readable and writable by its owner only (0600 on Unix; on Windows the folder's
/// ACL decides, as for every other key of the deployment). The mode is given at creation, never set afterwards, so
/// the key is not readable by others for even a moment.
/// </summary>
public static class OwnerOnlyPemFile
{
    private const UnixFileMode OwnerOnly = UnixFileMode.UserRead | UnixFileMode.UserWrite;

    /// <summary>Writes <paramref name="text"/> to <paramref name="path"/>, replacing what is there.</summary>
    public static void Write(string path, string text)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        ArgumentNullException.ThrowIfNull(text);
        using var file = new FileStream(path, Options(FileMode.Create));
        using var writer = new StreamWriter(file);
        writer.Write(text);
    }

    /// <summary>
    /// As <see cref="Write"/>, through <c>PATH.tmp</c> renamed over <paramref name="path"/>: a reader that watches the
    /// file (a server renewing its certificate) sees the old key or the new one, never half of one.
    /// <paramref name="ownerOnly"/> false for a public file (a certificate) that others may read: created with the
    /// process's default mode instead.
    /// </summary>
    public static void Replace(string path, string text, bool ownerOnly = true)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        ArgumentNullException.ThrowIfNull(text);
        var temporary = path + ".tmp";
        // A .tmp left by a crash may have been created with another mode; FileMode.Create would keep that mode.
        File.Delete(temporary);
        var options = ownerOnly ? Options(FileMode.CreateNew) : new FileStreamOptions { Mode = FileMode.CreateNew, Access = FileAccess.Write };
        using (var file = new FileStream(temporary, options))
        using (var writer = new StreamWriter(file))
        {
            writer.Write(text);
        }
        File.Move(temporary, path, overwrite: true);
    }

    /// <summary>True when group or others may read or write the file (never on Windows, where the folder's ACL decides).</summary>
    public static bool IsOpenToOthers(string path)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        return !OperatingSystem.IsWindows() && (File.GetUnixFileMode(path) & ~(OwnerOnly | UnixFileMode.UserExecute)) != 0;
    }

    private static FileStreamOptions Options(FileMode mode)
    {
        var options = new FileStreamOptions { Mode = mode, Access = FileAccess.Write };
        if (!OperatingSystem.IsWindows())
        {
            options.UnixCreateMode = OwnerOnly;
        }
        return options;
    }
}
