using System.Threading.Channels;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Bft.Hosting.Transport;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Tests.Hosting;

/// <summary>
/// The send side of a link over real loopback TCP: deferred queueing and one kick, small backlogs sent on
/// the kicking thread, large ones on a pool thread, and the ends of a session (queue completed, link closed).
/// </summary>
public sealed class LinkSendPathTests : IAsyncLifetime
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(10);
    private readonly TempCluster _cluster = new(replicas: 4, clients: 2);
    private readonly Channel<ClientRequest> _received = Channel.CreateUnbounded<ClientRequest>();
    private LinkListener _listener = null!;
    private KeyRing _ring = null!;

    public Task InitializeAsync()
    {
        _ring = new KeyRing(_cluster.Config);
        _listener = new LinkListener(_cluster.Config.Replica(0).ParseEndpoint(), 0, ClusterBootstrap.LoadKey(_cluster.Config, 0), _ring,
            _cluster.Config.Links, _ => true, (link, ct) => link.RunReceiveAsync((m, _) =>
            {
                _received.Writer.TryWrite((ClientRequest)m);
                return ValueTask.CompletedTask;
            }, ct), NullLogger.Instance);
        _listener.Start();
        return Task.CompletedTask;
    }

    private async Task<AuthenticatedLink> ConnectAsync()
    {
        using var key = ClusterBootstrap.LoadKey(_cluster.Config, 4);
        return await AuthenticatedLink.ConnectAsync(_cluster.Config.Replica(0).ParseEndpoint(), 4, 0, key, _ring, 5_000, CancellationToken.None);
    }

    private static OutboundPayload Request(long seq, int bytes) => OutboundPayload.Encode(new ClientRequest(4, seq, new byte[bytes]));

    /// <summary>Cancelling the session ends the pump as cancelled.</summary>
    private static async Task StopAsync(CancellationTokenSource stop, Task pump)
    {
        await stop.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => pump.WaitAsync(Wait));
    }

    private async Task<List<long>> ReceiveAsync(int count)
    {
        var seqs = new List<long>();
        while (seqs.Count < count)
        {
            seqs.Add((await _received.Reader.ReadAsync().AsTask().WaitAsync(Wait)).Sequence);
        }
        return seqs;
    }

    [Fact]
    public async Task DeferredMessagesWaitForTheKickAndThenArriveInOrder()
    {
        await using var link = await ConnectAsync();
        var queue = new SendQueue(maxFrames: 10_000, maxBytes: 64 << 20);
        using var stop = new CancellationTokenSource();
        var pump = link.RunSendPumpAsync(queue, stop.Token);
        for (var seq = 1; seq <= 50; seq++)
        {
            Assert.True(queue.TryEnqueueDeferred(Request(seq, 100)));  // small: sent on the kicking thread
        }
        await Task.Delay(300);
        Assert.False(_received.Reader.TryPeek(out _));  // deferred: nothing leaves before the kick
        Assert.Equal(50, queue.Count);
        queue.Kick();
        Assert.Equal(Enumerable.Range(1, 50).Select(i => (long)i), await ReceiveAsync(50));
        Assert.Equal(0, queue.Count);
        await StopAsync(stop, pump);
    }

    [Fact]
    public async Task LargeBacklogsAndConcurrentProducersKeepPerProducerOrder()
    {
        await using var link = await ConnectAsync();
        var queue = new SendQueue(maxFrames: 100_000, maxBytes: 256 << 20);
        using var stop = new CancellationTokenSource();
        var pump = link.RunSendPumpAsync(queue, stop.Token);
        // Above the inline threshold, so the kick hands the backlog to a pool thread; many frames, several flushes.
        for (var seq = 1; seq <= 400; seq++)
        {
            queue.TryEnqueueDeferred(Request(seq, 4_000));
        }
        queue.Kick();
        // Meanwhile producers on other threads queue and kick while the pool thread may still hold the writer.
        var lockObj = new object();
        long next = 401;
        await Task.WhenAll(Enumerable.Range(0, 4).Select(_ => Task.Run(() =>
        {
            for (var i = 0; i < 100; i++)
            {
                lock (lockObj)
                {
                    queue.TryEnqueueDeferred(Request(next++, 200));
                }
                queue.Kick();
            }
        })));
        var seqs = await ReceiveAsync(800);
        Assert.Equal(Enumerable.Range(1, 800).Select(i => (long)i), seqs);  // one queue, one writer: queue order is wire order
        Assert.Equal(0, queue.Count);
        Assert.Equal(0, queue.Dropped);
        await StopAsync(stop, pump);
    }

    [Fact]
    public async Task CompletingTheQueueEndsTheSessionAndRefusesLaterMessages()
    {
        await using var link = await ConnectAsync();
        var queue = new SendQueue(maxFrames: 100, maxBytes: 1 << 20);
        var pump = link.RunSendPumpAsync(queue, CancellationToken.None);
        Assert.True(queue.TryEnqueue(Request(1, 10)));
        Assert.Equal([1L], await ReceiveAsync(1));
        queue.Complete();
        await pump.WaitAsync(Wait);  // ends normally
        Assert.False(queue.TryEnqueue(Request(2, 10)));
        Assert.Equal(1, queue.Dropped);

        // A queue completed before a link attaches ends that link's session at once.
        await using var second = await ConnectAsync();
        await second.RunSendPumpAsync(queue, CancellationToken.None).WaitAsync(Wait);
    }

    [Fact]
    public async Task ClosingTheLinkWhileABacklogIsSendingEndsThePumpWithoutHanging()
    {
        var link = await ConnectAsync();
        var queue = new SendQueue(maxFrames: 100_000, maxBytes: 512 << 20);
        using var stop = new CancellationTokenSource();
        var pump = link.RunSendPumpAsync(queue, stop.Token);
        for (var seq = 1; seq <= 2_000; seq++)
        {
            queue.TryEnqueueDeferred(Request(seq, 60_000));  // ~120 MB: far more than the socket buffers hold
        }
        queue.Kick();
        await stop.CancelAsync();
        await link.DisposeAsync().AsTask().WaitAsync(Wait);
        var ended = await Record.ExceptionAsync(() => pump.WaitAsync(Wait));
        Assert.True(ended is OperationCanceledException or IOException or InvalidOperationException or ObjectDisposedException,
            $"the pump ended with {ended?.GetType().Name ?? "no exception"}");
        // The queue outlives the link: what was not sent stays queued for the next connection.
        Assert.True(queue.Count > 0);
        queue.Complete();
        while (queue.TryDequeue(out var p))
        {
            p.Release();
        }
    }

    public async Task DisposeAsync()
    {
        await _listener.DisposeAsync();
        _cluster.Dispose();
    }
}
