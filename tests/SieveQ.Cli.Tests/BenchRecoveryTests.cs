using System.Diagnostics;
using SieveQ.Bft.Hosting.Bench;
using SieveQ.Cli.Bench;

namespace SieveQ.Cli.Tests;

/// <summary>`sieveq bench recovery`: its arguments refused before anything starts, and its report's figures.</summary>
public sealed class BenchRecoveryTests
{
    [Theory]
    [InlineData("--steady", "1s", "--steady must be at least 2s, --window at least 500ms, and --duration hold the steady stretch and a round")]
    [InlineData("--window", "100ms", "--steady must be at least 2s, --window at least 500ms, and --duration hold the steady stretch and a round")]
    [InlineData("--duration", "20s", "--steady must be at least 2s, --window at least 500ms, and --duration hold the steady stretch and a round")]
    [InlineData("--window", "soon", "--window must be a duration such as 30s, 500ms or 2m, not 'soon'")]
    [InlineData("--steady", "x", "--phase must be a duration such as 5s, 500ms or 2m, not 'x'")]
    [InlineData("--rate", "0", "--size must be")]
    public async Task Bad_arguments_are_refused_with_exit_code_2_before_a_deployment_starts(string option, string value, string message)
    {
        var (code, stdout, stderr) = await SieveqProcess.RunAsync(["bench", "recovery", option, value]);
        Assert.Equal(2, code);
        Assert.StartsWith("error: " + message, stderr.Trim(), StringComparison.Ordinal);
        Assert.DoesNotContain("deployment", stdout, StringComparison.Ordinal);
    }

    [Fact]
    public void The_report_holds_the_worst_window_against_the_steady_stretch_and_counts_what_was_not_read()
    {
        var phases = new MeasuredPhases();
        var f = Stopwatch.Frequency;
        phases.Open(PhaseArm.Baseline, "steady", 0);
        phases.Close(10 * f);
        phases.Open(PhaseArm.Treatment, "round", 10 * f);
        phases.Close(12 * f);
        phases.Open(PhaseArm.Treatment, "round", 12 * f);
        phases.Close(14 * f);
        phases.Open(PhaseArm.Baseline, "after", 14 * f);
        phases.Close(20 * f);
        for (var i = 0; i < 100; i++)
        {
            phases.Record(i * f / 20, 100_000);       // steady: 100 ms
            phases.Record((10 * f) + (i * f / 100), 150_000);  // first window: 150 ms
            phases.Record((12 * f) + (i * f / 100), 900_000);  // second: 900 ms
            phases.Record((14 * f) + (i * f / 20), 100_000);
        }
        var figures = new E2eFigures("recovery", 0, 0, 20, 0, default, [], []) { SentInAll = 1000, ReceivedInAll = 998 };

        var report = RecoveryRoundReport.From(phases, true, "done", 4, figures);

        Assert.Equal(9, report.WorstP99Ratio, 1);
        Assert.Equal(12 * f, report.Worst.Phase.From);
        Assert.Equal(2, report.Lost);
        Assert.Equal(0, report.Extra);
        Assert.Equal(0, report.EmptyWindows);
        Assert.Contains(report.Lines(), l => l.StartsWith("ratio (worst window of the round / steady load before it, one deployment): p99 x9.0", StringComparison.Ordinal));
    }

    [Fact]
    public void A_window_in_which_nothing_sent_arrived_is_the_worst_and_the_ratio_is_unbounded()
    {
        var phases = new MeasuredPhases();
        var f = Stopwatch.Frequency;
        phases.Open(PhaseArm.Baseline, "steady", 0);
        phases.Close(10 * f);
        phases.Open(PhaseArm.Treatment, "round", 10 * f);
        phases.Close(12 * f);
        phases.Record(f, 100_000);
        var figures = new E2eFigures("recovery", 0, 0, 12, 0, default, [], []) { SentInAll = 5, ReceivedInAll = 6 };

        var report = RecoveryRoundReport.From(phases, false, "stopped at replica-sq-1", 2, figures);

        Assert.True(double.IsPositiveInfinity(report.WorstP99Ratio));
        Assert.Equal(1, report.EmptyWindows);
        Assert.Equal(1, report.Extra);
        Assert.Contains(report.Lines(), l => l.Contains("1 window(s) delivered nothing", StringComparison.Ordinal));
    }
}
