namespace SieveQ.AdminUi.Hosting;

/// <summary>
/// The console's own files (accounts, alarm journal) are replaced whole: written to <c>PATH.tmp</c>, readable by the
/// console's account only, then renamed over <c>PATH</c>, so a crash mid-write leaves the previous file intact.
/// </summary>
internal static class OwnerOnlyFile
{
    /// <summary>The temporary file to write; <see cref="Commit"/> puts it in place once the stream is closed.</summary>
    public static FileStream CreateTemporary(string path)
    {
        Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(path))!);
        var options = new FileStreamOptions { Mode = FileMode.Create, Access = FileAccess.Write };
        if (!OperatingSystem.IsWindows())
        {
            options.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        }
        return new FileStream(path + ".tmp", options);
    }

    public static void Commit(string path) => File.Move(path + ".tmp", path, overwrite: true);
}
