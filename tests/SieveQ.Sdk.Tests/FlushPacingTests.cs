using SieveQ.Agent.Hosting;
using SieveQ.Sieve.Sender;
using SieveQ.Sdk.Sender;
using SieveQ.Sdk.Tests.Fakes;

namespace SieveQ.Sdk.Tests;

/// <summary>The sender's flush interval: short while its window is empty, stretching as acknowledgements fall behind.</summary>
public sealed class FlushPacingTests
{
    [Theory]
    [InlineData(0, 1)]
    [InlineData(1, 1)]
    [InlineData(512, 4)]
    [InlineData(1024, 8)]
    [InlineData(5000, 8)]
    public void The_interval_rises_linearly_with_the_share_of_the_window_in_use(int outstanding, long expectedMs)
    {
        Assert.Equal(expectedMs, FlushPacing.IntervalMs(1, 8, outstanding, 1024));
    }

    [Fact]
    public void The_interval_never_falls_as_the_window_fills_and_stays_inside_its_bounds()
    {
        var previous = 0L;
        for (var outstanding = 0; outstanding <= 4096; outstanding++)
        {
            var ms = FlushPacing.IntervalMs(2, 40, outstanding, 4096);
            Assert.InRange(ms, 2, 40);
            Assert.True(ms >= previous, $"interval fell at {outstanding} outstanding");
            previous = ms;
        }
        Assert.Equal(40, previous);
    }

    [Fact]
    public void A_fixed_interval_or_a_degenerate_window_keeps_the_minimum()
    {
        Assert.Equal(3, FlushPacing.IntervalMs(3, 3, 4096, 4096));
        Assert.Equal(3, FlushPacing.IntervalMs(3, 1, 4096, 4096));
        Assert.Equal(3, FlushPacing.IntervalMs(3, 9, 10, 0));
        Assert.Equal(3, FlushPacing.IntervalMs(3, 9, -5, 100));
    }

    [Fact]
    public void Options_refuse_a_maximum_below_the_minimum_or_beyond_a_second()
    {
        var tooLow = new SieveQSenderOptions { FlushDelay = TimeSpan.FromMilliseconds(5), MaxFlushDelay = TimeSpan.FromMilliseconds(4) };
        Assert.Throws<ArgumentException>(tooLow.Validate);
        var tooHigh = new SieveQSenderOptions { MaxFlushDelay = TimeSpan.FromSeconds(2) };
        Assert.Throws<ArgumentException>(tooHigh.Validate);
        new SieveQSenderOptions { FlushDelay = TimeSpan.FromMilliseconds(5), MaxFlushDelay = TimeSpan.FromMilliseconds(5) }.Validate();
    }

    /// <summary>
    /// The same paced stream with acknowledgements held back (so the window fills) from a sender with a
    /// fixed 1 ms interval and from one whose interval may stretch to a second: the first signs about one
    /// root per message, the second far fewer, and every message still reaches the pre-SQs.
    /// </summary>
    [Fact]
    public async Task A_sender_whose_acknowledgements_lag_signs_fewer_roots_for_the_same_stream()
    {
        await using var world = await SieveWorld.StartAsync();
        world.Cluster.HoldAckResponses();
        var fixedRoots = await RootsForPacedStreamAsync(world, sender: 1, TimeSpan.FromMilliseconds(1));
        // Stretching to a second (the most the options take), so that a slow machine's longer pauses between messages still
        // fall well inside the stretched interval (100 ms was not always enough under a load of 20).
        var stretchedRoots = await RootsForPacedStreamAsync(world, sender: 2, TimeSpan.FromSeconds(1));
        // Messages 3 ms apart or more, against a 1 ms interval: nearly every message is its own root.
        Assert.True(fixedRoots >= Messages / 2, $"fixed interval: {fixedRoots} roots for {Messages} messages");
        Assert.True(stretchedRoots * 2 < fixedRoots, $"stretching interval: {stretchedRoots} roots, fixed: {fixedRoots}");
        world.Cluster.ReleaseAckResponses();
    }

    private const int Messages = 60;

    private static async Task<long> RootsForPacedStreamAsync(SieveWorld world, int sender, TimeSpan maxFlushDelay)
    {
        var options = new SieveQSenderOptions
        {
            FlushDelay = TimeSpan.FromMilliseconds(1),
            MaxFlushDelay = maxFlushDelay,
            Protocol = new SenderSqOptions { MaxOutstanding = 64, RetransmitAfterMs = 8_000, AckRequestIntervalMs = 5_000 },
        };
        await using var s = SieveQSender.Create(world.Context.ToClientConfiguration(), sender, world.StateDir($"sender-{sender}"), options);
        for (var i = 0; i < Messages; i++)
        {
            await s.SendAsync(SieveWorld.Receiver, System.Text.Encoding.UTF8.GetBytes($"paced {i}"));
            await Task.Delay(3);
        }
        // The last staged messages go out within one (stretched) interval.
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(20);
        while (s.Stats.FramesSent < Messages && DateTime.UtcNow < deadline)
        {
            await Task.Delay(20);
        }
        Assert.True(s.Stats.FramesSent >= Messages, $"{s.Stats.FramesSent} frames sent (messages and ACKREQs) for {Messages} messages");
        return s.Stats.RootsSigned;
    }
}
