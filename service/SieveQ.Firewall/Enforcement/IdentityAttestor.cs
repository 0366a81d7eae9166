using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using SieveQ.Firewall.Bridge;
using SieveQ.Firewall.Diagnostics;
using SieveQ.Firewall.Identity;

namespace SieveQ.Firewall.Enforcement;

/// <summary>
/// Answers NEW_IDENTITY events: hashes the process's image (cached by file identity) and attests it, so
/// the driver can re-authorise the pended connect. Hashing runs off the event loop behind a bounded queue;
/// when the queue is full the event is dropped and the driver's pend time-out gives the policy's answer.
/// </summary>
internal sealed class IdentityAttestor
{
    private readonly IDriverBridge bridge;
    private readonly ImageHashCache hashes;
    private readonly ILogger logger;
    private readonly Channel<FirewallEvent> queue;
    private long attested, failed, dropped;

    public IdentityAttestor(IDriverBridge bridge, ImageHashCache hashes, int capacity, ILogger logger)
    {
        this.bridge = bridge;
        this.hashes = hashes;
        this.logger = logger;
        queue = Channel.CreateBounded<FirewallEvent>(new BoundedChannelOptions(capacity)
        {
            FullMode = BoundedChannelFullMode.DropWrite,
            SingleReader = true,
        });
    }

    public long Attested => Interlocked.Read(ref attested);
    public long Failed => Interlocked.Read(ref failed);
    public long Dropped => Interlocked.Read(ref dropped);

    public void Offer(FirewallEvent ev)
    {
        if (!queue.Writer.TryWrite(ev))
        {
            Interlocked.Increment(ref dropped);
            FirewallMetrics.Attestations.Add(1, new KeyValuePair<string, object?>("outcome", "dropped"));
        }
    }

    public async Task RunAsync(CancellationToken cancellationToken)
    {
        try
        {
            await foreach (var ev in queue.Reader.ReadAllAsync(cancellationToken).ConfigureAwait(false))
            {
                await AttestAsync(ev, cancellationToken).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            // stopping
        }
    }

    private async Task AttestAsync(FirewallEvent ev, CancellationToken cancellationToken)
    {
        if (ev.PathTruncated)
        {
            // The pend times out to the policy's answer; attesting the hash of a prefix-named file would be wrong.
            Interlocked.Increment(ref failed);
            FirewallMetrics.Attestations.Add(1, new KeyValuePair<string, object?>("outcome", "failed"));
            logger.LogWarning("Cannot attest process {Key}: its image path is longer than the driver's event carries ({Path}...) and the process could not be asked", ev.ProcessKey, ev.ImagePath);
            return;
        }
        string path = NtImagePath.ToOpenablePath(ev.ImagePath);
        try
        {
            byte[] sha = await hashes.GetHashAsync(path, ev.MappedImage, cancellationToken).ConfigureAwait(false);
            await bridge.AttestAsync(ev.ProcessKey, sha, cancellationToken).ConfigureAwait(false);
            Interlocked.Increment(ref attested);
            FirewallMetrics.Attestations.Add(1, new KeyValuePair<string, object?>("outcome", "attested"));
            logger.LogDebug("Attested process {Key} ({Path}): {Sha}", ev.ProcessKey, ev.ImagePath, Convert.ToHexString(sha));
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or InvalidOperationException or ArgumentException)
        {
            // The pend times out to the policy's fail-open/closed answer; nothing else to do for it.
            Interlocked.Increment(ref failed);
            FirewallMetrics.Attestations.Add(1, new KeyValuePair<string, object?>("outcome", "failed"));
            logger.LogWarning("Cannot attest process {Key} ({Path}): {Error}", ev.ProcessKey, ev.ImagePath, e.Message);
        }
    }
}
