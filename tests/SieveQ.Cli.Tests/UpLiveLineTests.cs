using SieveQ.Cli.Commands;

namespace SieveQ.Cli.Tests;

/// <summary>`up`'s live line says when nothing is delivered instead of repeating the last latency it saw.</summary>
public class UpLiveLineTests
{
    [Fact]
    public void A_second_with_deliveries_shows_its_latency()
    {
        var live = new UpCommand.LiveFigures();
        live.OnLine("""{"rate": 1000, "delivered": 5000, "p50_ms": 4.5, "p99_ms": 12.25}""", nowMs: 10_000);
        var line = live.Line(10_500);
        Assert.Contains("1000 msg/s", line, StringComparison.Ordinal);
        Assert.Contains("p50   4.50 ms", line, StringComparison.Ordinal);
        Assert.Contains("p99  12.25 ms", line, StringComparison.Ordinal);
    }

    [Fact]
    public void A_second_without_deliveries_shows_no_latency()
    {
        var live = new UpCommand.LiveFigures();
        live.OnLine("""{"rate": 1000, "delivered": 5000, "p50_ms": 4.5, "p99_ms": 12.25}""", nowMs: 10_000);
        live.OnLine("""{"rate": 0, "delivered": 5000}""", nowMs: 11_000);
        var line = live.Line(11_200);
        Assert.DoesNotContain("4.50", line, StringComparison.Ordinal);
        Assert.Contains("nothing delivered", line, StringComparison.Ordinal);
        Assert.Contains("5000", line, StringComparison.Ordinal);
    }

    [Fact]
    public void A_receiver_that_stopped_reporting_is_not_shown_as_live()
    {
        var live = new UpCommand.LiveFigures();
        Assert.Contains("no figures from the demo receiver yet", live.Line(0), StringComparison.Ordinal);
        live.OnLine("""{"rate": 800, "delivered": 9000, "p50_ms": 3, "p99_ms": 9}""", nowMs: 10_000);
        var line = live.Line(10_000 + UpCommand.LiveFigures.StaleAfterMs + 2_000);
        Assert.DoesNotContain("800", line, StringComparison.Ordinal);
        Assert.Contains("no figures from the demo receiver for 5 s", line, StringComparison.Ordinal);
    }

    [Fact]
    public void Lines_that_are_not_figures_change_nothing()
    {
        var live = new UpCommand.LiveFigures();
        live.OnLine("""{"rate": 700, "delivered": 10, "p50_ms": 2, "p99_ms": 5}""", nowMs: 1_000);
        live.OnLine("warning: something else", nowMs: 1_500);
        live.OnLine("{not json", nowMs: 1_600);
        Assert.Contains("700 msg/s", live.Line(1_700), StringComparison.Ordinal);
    }
}
