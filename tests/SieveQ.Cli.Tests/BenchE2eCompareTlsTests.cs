using System.Diagnostics;
using System.Text.Json;

namespace SieveQ.Cli.Tests;

/// <summary>
/// `sieveq bench e2e --compare-tls` through the real CLI, shortened to one round: a TLS deployment, then a
/// cleartext one, each measured with CPU per delivered message by process kind, and the ratios in the JSON.
/// Asserts figures exist and are positive, never how large they are.
/// </summary>
public sealed class BenchE2eCompareTlsTests
{
    [Fact]
    public async Task One_round_measures_a_tls_and_a_cleartext_deployment_and_reports_the_ratios()
    {
        var dir = Directory.CreateTempSubdirectory("sieveq-bench-tls-").FullName;
        try
        {
            var json = Path.Combine(dir, "tls.json");
            string[] args = ["bench", "e2e", "--compare-tls", "--rounds", "1", "--size", "200", "--rate", "200", "--warmup", "3s", "--duration", "5s", "--json", json];
            using var process = Process.Start(SieveqProcess.Info(args))!;
            var stdout = process.StandardOutput.ReadToEndAsync();
            var stderr = process.StandardError.ReadToEndAsync();
            using (var limit = new CancellationTokenSource(TimeSpan.FromMinutes(5)))
            {
                await process.WaitForExitAsync(limit.Token);
            }
            var output = await stdout + await stderr;
            Assert.True(process.ExitCode == 0, output);

            var tlsAt = output.IndexOf("(TLS 1.3, pinned keys on every gRPC link)", StringComparison.Ordinal);
            var clearAt = output.IndexOf("(cleartext HTTP/2 on every gRPC link)", StringComparison.Ordinal);
            Assert.True(tlsAt >= 0 && clearAt > tlsAt, output);
            Assert.Contains("ratio (TLS / cleartext, means): throughput ", output, StringComparison.Ordinal);

            using var doc = JsonDocument.Parse(await File.ReadAllBytesAsync(json));
            var root = doc.RootElement;
            Assert.Equal("e2e-compare-tls", root.GetProperty("benchmark").GetString());
            var runs = root.GetProperty("runs").EnumerateArray().ToList();
            Assert.Equal(["tls13", "h2c"], runs.Select(r => r.GetProperty("transport").GetString()));
            foreach (var run in runs)
            {
                Assert.Equal(JsonValueKind.Null, run.GetProperty("error").ValueKind);
                var figures = run.GetProperty("figures");
                Assert.True(figures.GetProperty("delivered").GetInt64() > 0);
                BenchE2eCpuAssert.EveryKindCosts(figures, ("replica-sq", 4), ("pre-sq", 2), ("bench", 1), ("total", 7));
            }
            var ratio = root.GetProperty("ratio");
            foreach (var name in new[] { "throughput", "p50", "p99", "cpuPerMessage" })
            {
                Assert.True(ratio.GetProperty(name).GetDouble() > 0, name);
            }
            Assert.True(ratio.GetProperty("cpuPerMessageByKind").GetProperty("replica-sq").GetDouble() > 0);
            Assert.Single(ratio.GetProperty("pairs").EnumerateArray());
            Assert.Equal(1, root.GetProperty("tls13").GetProperty("runs").GetInt32());
            Assert.True(root.GetProperty("h2c").GetProperty("cpuMicrosPerMessage").GetProperty("total").GetDouble() > 0);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }
}

/// <summary>Checks a run's JSON <c>cpu</c> array: each expected kind present, with its process count, and a positive CPU per message.</summary>
internal static class BenchE2eCpuAssert
{
    public static void EveryKindCosts(JsonElement figures, params (string Kind, int Processes)[] expected)
    {
        var cpu = figures.GetProperty("cpu").EnumerateArray().ToDictionary(c => c.GetProperty("kind").GetString()!);
        foreach (var (kind, processes) in expected)
        {
            Assert.True(cpu.TryGetValue(kind, out var c), $"no CPU figure for {kind}: {figures.GetProperty("cpu")}");
            Assert.Equal(processes, c.GetProperty("processes").GetInt32());
            Assert.True(c.GetProperty("microsPerMessage").GetDouble() > 0, $"{kind}: {c}");
            Assert.True(c.GetProperty("cpuSeconds").GetDouble() > 0, $"{kind}: {c}");
        }
    }
}
