using System.Security.Cryptography;
using SieveQ.Firewall.Identity;

namespace SieveQ.Firewall.Tests;

public sealed class ImageHashCacheTests : IDisposable
{
    private readonly string dir = Directory.CreateTempSubdirectory("sieveq-hash-").FullName;

    public void Dispose() => Directory.Delete(dir, recursive: true);

    [Fact]
    public async Task Unchanged_file_is_hashed_once()
    {
        string path = Path.Combine(dir, "app.exe");
        await File.WriteAllBytesAsync(path, [1, 2, 3, 4]);
        var cache = new ImageHashCache();
        byte[] a = await cache.GetHashAsync(path, CancellationToken.None);
        byte[] b = await cache.GetHashAsync(path, CancellationToken.None);
        Assert.Equal(SHA256.HashData(new byte[] { 1, 2, 3, 4 }), a);
        Assert.Equal(a, b);
        Assert.Equal(1, cache.HashesComputed);
    }

    [Fact]
    public async Task Rewritten_file_with_forged_mtime_and_size_is_hashed_again()
    {
        string path = Path.Combine(dir, "app.exe");
        await File.WriteAllBytesAsync(path, [1, 2, 3, 4]);
        var mtime = File.GetLastWriteTimeUtc(path);
        var cache = new ImageHashCache();
        byte[] before = await cache.GetHashAsync(path, CancellationToken.None);

        await Task.Delay(20);
        await File.WriteAllBytesAsync(path, [9, 9, 9, 9]); /* same length */
        File.SetLastWriteTimeUtc(path, mtime);            /* same modification time */
        byte[] after = await cache.GetHashAsync(path, CancellationToken.None);

        Assert.NotEqual(before, after);
        Assert.Equal(SHA256.HashData(new byte[] { 9, 9, 9, 9 }), after);
        Assert.Equal(2, cache.HashesComputed);
    }

    [Fact]
    public async Task Binary_swapped_at_the_path_after_the_process_mapped_it_is_not_hashed_for_it()
    {
        string path = Path.Combine(dir, "app.exe");
        string other = Path.Combine(dir, "staged.exe");
        await File.WriteAllBytesAsync(path, [5, 5]);
        await File.WriteAllBytesAsync(other, [6, 6]);
        var source = new PlatformFileIdentitySource();
        FileIdentity started = source.Read(path);
        var mapped = new MappedImage(started.Device, started.FileId); // what the driver's create notify recorded
        var cache = new ImageHashCache(source);
        Assert.Equal(SHA256.HashData(new byte[] { 5, 5 }), await cache.GetHashAsync(path, mapped, CancellationToken.None));

        File.Move(other, path, overwrite: true); // the path now names another file; the process still runs the first
        var e = await Assert.ThrowsAsync<InvalidOperationException>(() => cache.GetHashAsync(path, mapped, CancellationToken.None));
        Assert.Contains("not the image the process mapped", e.Message, StringComparison.Ordinal);
        Assert.Equal(SHA256.HashData(new byte[] { 6, 6 }), await cache.GetHashAsync(path, CancellationToken.None)); // without it: the new file
    }

    [Fact]
    public async Task Binary_replaced_by_rename_is_a_new_identity()
    {
        string path = Path.Combine(dir, "app.exe");
        string other = Path.Combine(dir, "staged.exe");
        await File.WriteAllBytesAsync(path, [5, 5]);
        await File.WriteAllBytesAsync(other, [6, 6]);
        var source = new PlatformFileIdentitySource();
        var cache = new ImageHashCache(source);
        FileIdentity first = source.Read(path);
        await cache.GetHashAsync(path, CancellationToken.None);

        File.Move(other, path, overwrite: true);
        Assert.NotEqual(first, source.Read(path));
        Assert.Equal(SHA256.HashData(new byte[] { 6, 6 }), await cache.GetHashAsync(path, CancellationToken.None));
        Assert.Equal(2, cache.HashesComputed);
    }
}
