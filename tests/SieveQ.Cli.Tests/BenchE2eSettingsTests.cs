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

    [Theory]
    [InlineData(null, false, false, false, null)]
    [InlineData(null, true, false, false, null)]
    [InlineData(3, true, false, false, null)]
    [InlineData(2, false, false, false, "--rounds is only for --compare-tls")]
    [InlineData(0, true, false, false, "--rounds must be 1..10")]
    [InlineData(11, true, false, false, "--rounds must be 1..10")]
    [InlineData(null, true, true, false, "--compare-tls runs both transports itself: not with --cleartext")]
    [InlineData(null, true, false, true, "--compare-tls has no --plot (it runs no direct baseline): use --json")]
    public void Compare_tls_options_are_checked(int? rounds, bool compareTls, bool cleartext, bool plot, string? expected)
    {
        var s = Settings() with { Rounds = rounds, CompareTls = compareTls, Cleartext = cleartext, Plot = plot };
        Assert.Equal(expected, BenchE2eCommand.SettingsError(s, TimeSpan.FromSeconds(5)));
    }

    [Fact]
    public void Compare_tls_does_not_take_rules()
    {
        var s = Settings(rules: "rules.json") with { CompareTls = true };
        Assert.Equal("--compare-tls does not combine with --rules: one comparison per run", BenchE2eCommand.SettingsError(s, TimeSpan.FromSeconds(5)));
    }

    [Fact]
    public void A_negative_warmup_is_refused() =>
        Assert.StartsWith("--size must be", BenchE2eCommand.SettingsError(Settings() with { Warmup = TimeSpan.FromSeconds(-1) }, TimeSpan.FromSeconds(5)));

    [Theory]
    [InlineData("abc", "30s", "20s", "5s", "--rate must be 'max' or a whole number of messages per second, not 'abc'")]
    [InlineData("-5", "30s", "20s", "5s", "--rate must be 'max' or a whole number of messages per second, not '-5'")]
    [InlineData("1e3", "30s", "20s", "5s", "--rate must be 'max' or a whole number of messages per second, not '1e3'")]
    [InlineData("99999999999", "30s", "20s", "5s", "--rate must be 'max' or a whole number of messages per second, not '99999999999'")]
    [InlineData("max", "thirty", "20s", "5s", "--duration must be a duration such as 30s, 500ms or 2m, not 'thirty'")]
    [InlineData("max", "30s", "NaNs", "5s", "--warmup must be a duration such as 20s, 500ms or 2m, not 'NaNs'")]
    [InlineData("max", "30s", "20s", "5x", "--phase must be a duration such as 5s, 500ms or 2m, not '5x'")]
    [InlineData("max", "30s", "20s", "1e300m", "--phase must be a duration such as 5s, 500ms or 2m, not '1e300m'")]
    public void Malformed_rates_and_durations_are_refused(string rate, string duration, string warmup, string phase, string expected) =>
        Assert.Equal(expected, BenchE2eCommand.ParseError(rate, duration, warmup, phase, out _, out _, out _, out _));

    [Fact]
    public void Well_formed_rates_and_durations_are_read()
    {
        Assert.Null(BenchE2eCommand.ParseError("1000", "30s", "500ms", "2m", out var rate, out var duration, out var warmup, out var phase));
        Assert.Equal((1000, TimeSpan.FromSeconds(30), TimeSpan.FromMilliseconds(500), TimeSpan.FromMinutes(2)), (rate, duration, warmup, phase));
        Assert.Null(BenchE2eCommand.ParseError("max", "30", "20s", "5s", out rate, out _, out _, out _));
        Assert.Null(rate);
    }

    [Theory]
    [InlineData("--rate", "abc", "error: --rate must be 'max' or a whole number of messages per second, not 'abc'")]
    [InlineData("--rounds", "3", "error: --rounds is only for --compare-tls")]
    [InlineData("--cleartext", null, "error: --compare-tls runs both transports itself: not with --cleartext")]
    public async Task The_command_refuses_malformed_arguments_before_starting_anything(string option, string? value, string expected)
    {
        List<string> args = ["bench", "e2e", "--duration", "5s", option];
        if (value is not null)
        {
            args.Add(value);
        }
        if (option == "--cleartext")
        {
            args.Add("--compare-tls");
        }
        var (code, stdout, stderr) = await SieveqProcess.RunAsync(args);
        Assert.Equal(2, code);
        Assert.Equal(expected, stderr.Trim());
        Assert.DoesNotContain("deployment", stdout, StringComparison.Ordinal);
    }
}
