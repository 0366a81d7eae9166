using System.Text.Json;

namespace SieveQ.Cli.Tests;

/// <summary>`sieveq bench restart` through the real CLI: two whole-cluster SIGKILLs, measured against a cold start.</summary>
public sealed class BenchRestartTests
{
    [Fact]
    public async Task Whole_cluster_kills_resume_lose_nothing_and_are_reported_against_a_cold_start()
    {
        var dir = Directory.CreateTempSubdirectory("sieveq-bench-restart-").FullName;
        try
        {
            var json = Path.Combine(dir, "restart.json");
            var (code, stdout, stderr) = await SieveqProcess.RunAsync(["bench", "restart", "--restarts", "2", "--seed", "11", "--json", json]);
            Assert.True(code == 0, stdout + stderr);
            Assert.Contains("drawn from seed 11", stdout, StringComparison.Ordinal);

            using var doc = JsonDocument.Parse(await File.ReadAllBytesAsync(json));
            var root = doc.RootElement;
            Assert.Equal(2, root.GetProperty("rounds").GetArrayLength());
            Assert.Equal(0, root.GetProperty("duplicates").GetInt32());
            Assert.True(root.GetProperty("completed").GetInt64() > 20);
            Assert.True(root.GetProperty("coldStartMs").GetDouble() > 0);
            Assert.True(root.GetProperty("resumeMs").GetProperty("max").GetDouble() >= root.GetProperty("resumeMs").GetProperty("p50").GetDouble());
            // Each kill is followed by a new regency (nobody may WRITE in the recovered one), and only a few.
            foreach (var r in root.GetProperty("rounds").EnumerateArray())
            {
                var changes = r.GetProperty("RegencyAfter").GetInt32() - r.GetProperty("RegencyBefore").GetInt32();
                Assert.InRange(changes, 1, 4);
            }
        }
        finally
        {
            Directory.Delete(dir, true);
        }
    }

    [Fact]
    public async Task Out_of_range_arguments_are_refused_with_a_clear_error()
    {
        var (code, _, stderr) = await SieveqProcess.RunAsync(["bench", "restart", "--restarts", "0"]);
        Assert.Equal(2, code);
        Assert.Contains("--restarts must be 1..1000", stderr, StringComparison.Ordinal);
    }
}
