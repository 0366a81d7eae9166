using Microsoft.Extensions.Logging;
using SieveQ.Bft.Hosting.Logging;

namespace SieveQ.Bft.Tests.Hosting;

/// <summary>No one kind of log message can flood the log (issue 16, item 5); what is left out is counted and said.</summary>
public class RateLimitedLoggerFactoryTests
{
    [Fact]
    public void A_flood_of_one_warning_is_cut_to_the_bucket_and_the_next_line_says_how_many_were_left_out()
    {
        var now = 0L;
        var recorder = new LogRecorder();
        using var inner = LoggerFactory.Create(b => b.AddProvider(recorder).SetMinimumLevel(LogLevel.Trace));
        using var factory = new RateLimitedLoggerFactory(inner, () => now);
        var log = factory.CreateLogger("Kestrel");
        for (var i = 0; i < 10_000; i++)
        {
            log.LogWarning(new EventId(7), "connection {Id} refused", i);
        }
        Assert.Equal(RateLimitedLoggerFactory.Burst, recorder.Lines.Count);
        Assert.Equal(10_000 - RateLimitedLoggerFactory.Burst, factory.Suppressed);

        // Another kind of message is not held back by the flood, and errors always pass.
        log.LogWarning(new EventId(8), "something else");
        log.LogError(new EventId(7), "an error");
        Assert.Equal(RateLimitedLoggerFactory.Burst + 2, recorder.Lines.Count);

        // A second later one more of the flooded kind is written, after a line counting what was left out.
        now += 1_000;
        log.LogWarning(new EventId(7), "connection {Id} refused", 10_001);
        Assert.Contains($"({10_000 - RateLimitedLoggerFactory.Burst} more messages like the next one were suppressed", recorder.Lines[^2].Text, StringComparison.Ordinal);
        Assert.Equal("connection 10001 refused", recorder.Lines[^1].Text);
    }
}
