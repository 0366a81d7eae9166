using SieveQ.Bft.Tests.Core;
using SieveQ.Bft.Codec;
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

    private static readonly IProofSigner Client4 = HmacProofs.ClientSigner(4);

    private sealed class ClientProofs : IClientProofVerifier
    {
        public bool Verify(int client, ReadOnlySpan<byte> data, ReadOnlySpan<byte> proof) =>
            proof.SequenceEqual(HmacProofs.ClientSigner(client).Sign(data));
    }

    private static ClientRequest Signed(long seq, byte[] payload) =>
        new(4, seq, payload) { Proof = Client4.Sign(SigningBytes.ForRequest(4, seq, payload)) };

    [Fact]
    public void RequestVerdictsAreCachedAcrossTheMessagesThatCarryTheRequest()
    {
        var v = new CountingVerifier();
        var checks = new RequestVerification(new AuthenticatedRequestVerifier(new ClientProofs(), 4, v));
        var good = Signed(1, [7]);
        var bad = Signed(2, []);
        Assert.True(checks.VerifyAll(good));
        Assert.True(checks.VerifyAll(new Propose(0, 0, 1, new Batch(0, [good]))));
        Assert.True(checks.VerifyAll(new Forward(1, [good])));
        Assert.Equal(1, v.Calls);
        Assert.False(checks.VerifyAll(new Propose(0, 0, 2, new Batch(0, [good, bad]))));
        Assert.False(checks.VerifyAll(new Stop(1, 1, [bad])));
        Assert.Equal(2, v.Calls);
        Assert.Equal(1, checks.Refused);
        // A SYNC's requests are checked in its value and in the prior value it binds for the instance below.
        var evidence = new StopData(2, 1, 0, [], [1]);
        Assert.True(checks.VerifyAll(new Sync(1, 1, [evidence], 2, new Batch(0, [good]), new Batch(0, [good]))));
        Assert.False(checks.VerifyAll(new Sync(1, 1, [evidence], 2, new Batch(0, [good]), new Batch(0, [bad]))));
        Assert.False(checks.VerifyAll(new Sync(1, 1, [evidence], 2, new Batch(0, [bad]), null)));
    }

    [Fact]
    public void A_request_not_made_by_the_client_it_names_is_refused_on_every_path()
    {
        var v = new CountingVerifier();
        var checks = new RequestVerification(new AuthenticatedRequestVerifier(new ClientProofs(), 4, v));
        var good = Signed(1, [7]);
        ClientRequest[] forged =
        [
            new(4, 5, [9]),                                   // no proof at all
            new(4, 5, [9]) { Proof = new byte[32] },          // a made-up proof
            new(4, 2, [7]) { Proof = good.Proof },            // renumbered, genuine proof
            new(4, 1, [8]) { Proof = good.Proof },            // payload changed, genuine proof
            new(5, 1, [7]) { Proof = good.Proof },            // passed off as another client's
            new(3, 1, [7]) { Proof = HmacProofs.ClientSigner(3).Sign(SigningBytes.ForRequest(3, 1, [7])) },  // a replica's id
        ];
        Assert.True(checks.VerifyAll(new Forward(1, [good])));
        foreach (var f in forged)
        {
            Assert.False(checks.VerifyAll(new Forward(1, [good, f])));
            Assert.False(checks.VerifyAll(new Propose(0, 0, 1, new Batch(0, [f, good]))));
            Assert.False(checks.VerifyAll(new Stop(2, 1, [f])));
        }
        Assert.Equal(forged.Length, checks.BadProofs);
        Assert.Equal(1, v.Calls);  // the application's check never ran on a forgery
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
