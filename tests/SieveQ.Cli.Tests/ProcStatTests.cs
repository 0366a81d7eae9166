using System.Diagnostics;
using SieveQ.Cli.Bench;

namespace SieveQ.Cli.Tests;

public sealed class ProcStatTests
{
    // A real line (fields 14 and 15, utime and stime, set to 1234 and 567 here).
    private const string Tail = "R 21916 21916 10945 0 -1 4194304 103 0 0 0 1234 567 0 0 20 0 1 0 4253245 2998272 416 18446744073709551615 94141808934912 0";

    [Fact]
    public void Utime_and_stime_are_read_after_the_name() => Assert.Equal(1234 + 567, ProcStat.CpuTicks($"21918 (head) {Tail}"));

    [Theory]
    [InlineData("(a) b)")]
    [InlineData("(sieveq 1 2 3 4 5 6 7 8 9 10 11 12 13)")]
    [InlineData("())")]
    [InlineData("(x (y) z)")]
    public void A_name_with_spaces_and_parentheses_does_not_shift_the_fields(string name) =>
        Assert.Equal(1234 + 567, ProcStat.CpuTicks($"7 {name} {Tail}"));

    [Theory]
    [InlineData("")]
    [InlineData("garbage")]
    [InlineData("7 head R 1 2 3 4 5 6 7 8 9 10 11 12 13 14")]
    [InlineData("7 (head R 1 2 3 4 5 6 7 8 9 10 11 12 13 14")]
    [InlineData("x7 (head) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14")]
    [InlineData("7 (head) R 21916 21916 10945 0 -1 4194304 103 0 0 0 1234")]
    [InlineData("7 (head) R 21916 21916 10945 0 -1 4194304 103 0 0 0 12x4 567 0")]
    [InlineData("7 (head) R 21916 21916 10945 0 -1 4194304 103 0 0 0 1234 -567 0")]
    [InlineData("7 (head)")]
    public void A_malformed_line_reads_as_nothing(string line) => Assert.Null(ProcStat.CpuTicks(line));

    [Fact]
    public void Ticks_become_time_at_the_clock_rate()
    {
        Assert.Equal(TimeSpan.FromMilliseconds(1230), ProcStat.ToTime(123, 100));
        Assert.Equal(TimeSpan.FromMilliseconds(123), ProcStat.ToTime(123, 1000));
    }

    [Fact]
    public void The_clock_rate_is_the_kernel_user_hz() => Assert.Equal(100, ClockTicks.PerSecond);

    [Fact]
    public void This_process_reads_the_same_cpu_time_as_the_runtime_says()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }
        using var self = Process.GetCurrentProcess();
        // Burn some CPU so the figure is not zero at the 10 ms tick.
        var until = Stopwatch.GetTimestamp() + Stopwatch.Frequency / 5;
        while (Stopwatch.GetTimestamp() < until)
        {
            Thread.SpinWait(1000);
        }
        self.Refresh();
        var before = self.TotalProcessorTime;
        var read = ProcessCpuClock.FromProc(Environment.ProcessId);
        self.Refresh();
        var after = self.TotalProcessorTime;

        Assert.NotNull(read);
        // The runtime counts this process's time more finely than /proc's 10 ms ticks, and /proc rounds utime and
        // stime down separately: so up to two ticks apart. A wrong field (a child's time, a fault count) is not near.
        var tick = TimeSpan.FromSeconds(1.0 / ClockTicks.PerSecond);
        Assert.InRange(read.Value, before - (2 * tick), after + tick);
        Assert.True(read.Value > TimeSpan.Zero);
        Assert.Null(ProcessCpuClock.FromProc(int.MaxValue));
    }
}
