using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Replica;
using SieveQ.Bft.Hosting.Transport;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Tests.Hosting;

public sealed class BoundsTests
{
    [Fact]
    public void SendQueueDropsBeyondItsFrameAndByteBounds()
    {
        var q = new SendQueue(maxFrames: 3, maxBytes: 1_000);
        Assert.True(q.TryEnqueue(OutboundPayload.Copy(new byte[100])));
        Assert.True(q.TryEnqueue(OutboundPayload.Copy(new byte[100])));
        Assert.False(q.TryEnqueue(OutboundPayload.Copy(new byte[900])));  // bytes
        Assert.True(q.TryEnqueue(OutboundPayload.Copy(new byte[100])));
        Assert.False(q.TryEnqueue(OutboundPayload.Copy(new byte[1])));    // frames
        Assert.Equal(3, q.Count);
        Assert.Equal(300, q.Bytes);
        Assert.Equal(2, q.Dropped);
    }

    [Fact]
    public void SharedPayloadReturnsToThePoolOnlyAfterEveryQueueReleasedIt()
    {
        var p = OutboundPayload.Copy([1, 2, 3], references: 2);
        p.Release();
        Assert.Equal([1, 2, 3], p.Span.ToArray());
        p.Release();
        Assert.Throws<InvalidOperationException>(p.Release);
    }

    private sealed class CountingVerifier : IRequestVerifier
    {
        public int Calls;
        public bool Verify(ClientRequest request)
        {
            Calls++;
            return request.Payload.Length > 0;
        }
    }

    [Fact]
    public void RequestVerdictsAreCachedAcrossTheMessagesThatCarryTheRequest()
    {
        var v = new CountingVerifier();
        var checks = new RequestVerification(v);
        var good = new ClientRequest(4, 1, [7]);
        var bad = new ClientRequest(4, 2, []);
        Assert.True(checks.VerifyAll(good));
        Assert.True(checks.VerifyAll(new Propose(0, 0, 1, new Batch(0, [good]))));
        Assert.True(checks.VerifyAll(new Forward(1, [good])));
        Assert.Equal(1, v.Calls);
        Assert.False(checks.VerifyAll(new Propose(0, 0, 2, new Batch(0, [good, bad]))));
        Assert.False(checks.VerifyAll(new Stop(1, 1, [bad])));
        Assert.Equal(2, v.Calls);
        // A SYNC's requests are checked in its value and in the prior value it binds for the instance below.
        var evidence = new StopData(2, 1, 0, [], [1]);
        Assert.True(checks.VerifyAll(new Sync(1, 1, [evidence], 2, new Batch(0, [good]), new Batch(0, [good]))));
        Assert.False(checks.VerifyAll(new Sync(1, 1, [evidence], 2, new Batch(0, [good]), new Batch(0, [bad]))));
        Assert.False(checks.VerifyAll(new Sync(1, 1, [evidence], 2, new Batch(0, [bad]), null)));
    }
}

public sealed class LinkCreditTests
{
    [Fact]
    public async Task CreditBoundsMessagesAndBytesButAlwaysAdmitsOneMessage()
    {
        var credit = new SieveQ.Bft.Hosting.Replica.LinkCredit(maxMessages: 2, maxBytes: 100);
        await credit.AcquireAsync(1_000, CancellationToken.None);  // oversized, but the link is empty
        var second = credit.AcquireAsync(10, CancellationToken.None);
        Assert.False(second.IsCompleted);  // over the byte bound: waits
        credit.Release(1_000);
        await second.AsTask().WaitAsync(TimeSpan.FromSeconds(5));
        await credit.AcquireAsync(10, CancellationToken.None);
        var third = credit.AcquireAsync(1, CancellationToken.None);
        Assert.False(third.IsCompleted);  // over the message bound
        credit.Release(10);
        await third.AsTask().WaitAsync(TimeSpan.FromSeconds(5));
        Assert.Equal(2, credit.Messages);
        Assert.Equal(11, credit.Bytes);
    }
}
