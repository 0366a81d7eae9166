using SieveQ.Cli.Commands;

namespace SieveQ.Cli.Tests;

public sealed class BenchE2eSettingsTests
{
    private static E2eSettings Settings(int size = 500, int? rate = 1000, int durationS = 10, string? rules = null) =>
        new(size, rate, TimeSpan.FromSeconds(durationS), TimeSpan.FromSeconds(5), rules, Durability: true, Keep: false, LogLevel: "Warning");

    [Fact]
    public void Without_rules_the_phase_length_is_not_checked()
    {
        // The default phase (5 s) is more than half of a 5 s run, which only matters for an A/B run.
        Assert.Null(BenchE2eCommand.SettingsError(Settings(durationS: 5), TimeSpan.FromSeconds(5)));
    }

    [Fact]
    public void With_rules_a_phase_longer_than_half_the_run_is_refused()
    {
        var error = BenchE2eCommand.SettingsError(Settings(durationS: 5, rules: "rules.json"), TimeSpan.FromSeconds(5));
        Assert.Equal("--phase must be at least 2s and at most half of --duration", error);
        Assert.Null(BenchE2eCommand.SettingsError(Settings(durationS: 10, rules: "rules.json"), TimeSpan.FromSeconds(5)));
    }

    [Theory]
    [InlineData(4, 1000, 10)]
    [InlineData(70_000, 1000, 10)]
    [InlineData(500, 0, 10)]
    [InlineData(500, 1000, 0)]
    public void Sizes_rates_and_durations_out_of_range_are_refused(int size, int rate, int durationS)
    {
        Assert.StartsWith("--size must be", BenchE2eCommand.SettingsError(Settings(size, rate, durationS), TimeSpan.FromSeconds(2)));
    }
}
