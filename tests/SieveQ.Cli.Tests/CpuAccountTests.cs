using System.Diagnostics;
using SieveQ.Cli.Bench;
using SieveQ.Deployment;

namespace SieveQ.Cli.Tests;

public sealed class CpuAccountTests
{
    [Theory]
    [InlineData("replica-sq-2", "replica-sq")]
    [InlineData("pre-sq-10", "pre-sq")]
    [InlineData("agent-agent", "agent-agent")]
    [InlineData("bench", "bench")]
    [InlineData("odd-", "odd-")]
    public void Kinds_drop_the_instance_number(string name, string kind) => Assert.Equal(kind, CpuAccount.KindOf(name));

    [Fact]
    public void Each_kind_is_charged_what_its_processes_used_between_the_readings()
    {
        var start = Readings(("bench", 1, 1000), ("replica-sq-0", 10, 500), ("replica-sq-1", 11, 700), ("pre-sq-4", 14, 100), ("pre-sq-5", 15, 100));
        var end = Readings(("bench", 1, 1300), ("replica-sq-0", 10, 900), ("replica-sq-1", 11, 1500), ("pre-sq-4", 14, 150), ("pre-sq-5", 15, 110));

        var used = CpuAccount.Used(start, end);

        Assert.Equal(
            [("replica-sq", 2, Ms(400 + 800)), ("bench", 1, Ms(300)), ("pre-sq", 2, Ms(60))],
            used);
        var figures = CpuAccount.PerMessage(used, delivered: 100);
        Assert.Equal(["replica-sq", "bench", "pre-sq", "total"], figures.Select(f => f.Kind));
        Assert.Equal(12_000, figures[0].MicrosPerMessage, 6);   // 1.2 s over 100 messages
        Assert.Equal(3_000, figures[1].MicrosPerMessage, 6);
        Assert.Equal(600, figures[2].MicrosPerMessage, 6);
        Assert.Equal(("total", 5, 1.56, 15_600.0), (figures[3].Kind, figures[3].Processes, figures[3].CpuSeconds, figures[3].MicrosPerMessage));
    }

    [Fact]
    public void A_process_gone_or_restarted_within_the_window_is_left_out()
    {
        var start = Readings(("replica-sq-0", 10, 500), ("replica-sq-1", 11, 700), ("replica-sq-2", 12, 100), ("pre-sq-4", 14, 100));
        // replica-sq-1 restarted (new pid, its counter began again), replica-sq-2 exited; pre-sq-5 started inside the window.
        var end = Readings(("replica-sq-0", 10, 900), ("replica-sq-1", 99, 900), ("pre-sq-4", 14, 150), ("pre-sq-5", 15, 80));

        var used = CpuAccount.Used(start, end);

        Assert.Equal([("replica-sq", 1, Ms(400)), ("pre-sq", 1, Ms(50))], used);
    }

    [Fact]
    public void Without_deliveries_there_is_no_cost_per_message()
    {
        var figures = CpuAccount.PerMessage([("bench", 1, Ms(10))], delivered: 0);
        Assert.All(figures, f => Assert.True(double.IsNaN(f.MicrosPerMessage)));
        Assert.Equal(0.01, figures[^1].CpuSeconds, 6);
    }

    private static TimeSpan Ms(int ms) => TimeSpan.FromMilliseconds(ms);

    private static Dictionary<string, CpuReading> Readings(params (string Name, int Pid, int CpuMs)[] readings) =>
        readings.ToDictionary(r => r.Name, r => new CpuReading(r.Pid, Ms(r.CpuMs)));

    [Fact]
    public async Task A_busy_component_is_charged_its_cpu_and_an_idle_one_next_to_nothing()
    {
        var logs = Directory.CreateTempSubdirectory("sieveq-cpu-");
        try
        {
            var processes = new ComponentProcesses(args => new ProcessStartInfo("/bin/sh", ["-c", args[0]]), logs.FullName);
            try
            {
                processes.Start("spin-0", ["while :; do :; done"]);
                processes.Start("spin-1", ["while :; do :; done"]);
                processes.Start("idle-0", ["sleep 60"]);
                var account = CpuAccount.Start(processes);

                // Wait for CPU, not for time: on a loaded machine the spinners may get little of it.
                var used = account.Stop();
                var deadline = Stopwatch.GetTimestamp() + (60 * Stopwatch.Frequency);
                while (Cpu(used, "spin") < TimeSpan.FromMilliseconds(300) && Stopwatch.GetTimestamp() < deadline)
                {
                    await Task.Delay(100);
                    used = account.Stop();
                }

                Assert.Equal(2, used.Single(u => u.Kind == "spin").Processes);
                Assert.True(Cpu(used, "spin") >= TimeSpan.FromMilliseconds(300), $"spinners used {Cpu(used, "spin")}");
                Assert.True(Cpu(used, "idle") < TimeSpan.FromMilliseconds(100), $"the sleeper used {Cpu(used, "idle")}");
                Assert.Contains(used, u => u.Kind == "bench");

                var figures = CpuAccount.PerMessage(used, delivered: 1000);
                var total = figures[^1];
                Assert.Equal("total", total.Kind);
                Assert.Equal(4, total.Processes);
                Assert.Equal(figures.Take(figures.Count - 1).Sum(f => f.MicrosPerMessage), total.MicrosPerMessage, 6);
                Assert.Equal(Cpu(used, "spin").TotalMicroseconds / 1000, figures.Single(f => f.Kind == "spin").MicrosPerMessage, 6);
                Assert.True(double.IsNaN(CpuAccount.PerMessage(used, delivered: 0)[0].MicrosPerMessage));
            }
            finally
            {
                await processes.StopAllAsync(TimeSpan.FromSeconds(1));
            }
        }
        finally
        {
            logs.Delete(recursive: true);
        }
    }

    private static TimeSpan Cpu(IReadOnlyList<(string Kind, int Processes, TimeSpan Cpu)> used, string kind) =>
        used.SingleOrDefault(u => u.Kind == kind).Cpu;
}
