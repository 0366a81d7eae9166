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
