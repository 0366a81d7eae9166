using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Tests;

/// <summary>A subscription's claimed time may be anything: the freshness check must refuse extremes, never throw.</summary>
public sealed class SubscriptionTimeTests
{
    [Theory]
    [InlineData(long.MinValue)]
    [InlineData(long.MinValue + 1)]
    [InlineData(long.MaxValue)]
    [InlineData(0L)]
    public void Times_far_from_now_are_refused_without_overflow(long claimed)
    {
        var now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        var s = new Subscription(StructureKind.ReceiverSubscription, 100, 2, claimed, new byte[64], new byte[17]);
        Assert.False(SubscriptionCodec.IsValid(s, 2, now, 120_000, (_, _) => true));
        Assert.True(SubscriptionCodec.IsValid(s with { TimeMs = now - 1_000 }, 2, now, 120_000, (_, _) => true));
    }
}
