using System.Collections.Concurrent;
using System.Security.Cryptography;
using SieveQ.Firewall.Diagnostics;

namespace SieveQ.Firewall.Identity;

/// <summary>
/// SHA-256 of executable images, cached by file identity and change time so a connect from a
/// known binary costs a stat, not a hash, while a replaced or modified binary is hashed again.
/// </summary>
public sealed class ImageHashCache
{
    private readonly IFileIdentitySource identities;
    private readonly ConcurrentDictionary<string, (FileIdentity Identity, byte[] Hash)> entries = new(StringComparer.Ordinal);
    private long hashesComputed;

    public ImageHashCache(IFileIdentitySource? identities = null)
    {
        this.identities = identities ?? new PlatformFileIdentitySource();
    }

    private static void RequireMapped(string path, MappedImage? mapped, FileIdentity file)
    {
        if (mapped is { } m && !m.Names(file))
        {
            throw new InvalidOperationException(
                $"{path} is not the image the process mapped (volume {m.Volume:x}, file {m.FileId:x}); it was replaced since the process started");
        }
    }

    /// <summary>How many times a file was actually read and hashed.</summary>
    public long HashesComputed => Interlocked.Read(ref hashesComputed);

    public Task<byte[]> GetHashAsync(string path, CancellationToken cancellationToken) =>
        GetHashAsync(path, null, cancellationToken);

    /// <summary>
    /// Hashes the file at <paramref name="path"/>; when <paramref name="mapped"/> is given, only if that file is the
    /// image the process mapped (before and after reading), so a binary swapped at the path after the process
    /// started is never attested for it.
    /// </summary>
    public async Task<byte[]> GetHashAsync(string path, MappedImage? mapped, CancellationToken cancellationToken)
    {
        FileIdentity before = identities.Read(path);
        RequireMapped(path, mapped, before);
        if (entries.TryGetValue(path, out var cached) && cached.Identity == before)
        {
            return cached.Hash;
        }
        byte[] hash;
        var stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, 1 << 16, useAsync: true);
        await using (stream.ConfigureAwait(false))
        {
            hash = await SHA256.HashDataAsync(stream, cancellationToken).ConfigureAwait(false);
        }
        Interlocked.Increment(ref hashesComputed);
        FirewallMetrics.ImagesHashed.Add(1);
        // Cache only when the file did not change while it was read.
        FileIdentity after = identities.Read(path);
        RequireMapped(path, mapped, after);
        if (after == before)
        {
            entries[path] = (after, hash);
        }
        return hash;
    }
}
