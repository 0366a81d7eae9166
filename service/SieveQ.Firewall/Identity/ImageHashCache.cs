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

    /// <summary>How many times a file was actually read and hashed.</summary>
    public long HashesComputed => Interlocked.Read(ref hashesComputed);

    public async Task<byte[]> GetHashAsync(string path, CancellationToken cancellationToken)
    {
        FileIdentity before = identities.Read(path);
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
        if (after == before)
        {
            entries[path] = (after, hash);
        }
        return hash;
    }
}
