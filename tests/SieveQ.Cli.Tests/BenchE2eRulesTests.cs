using System.Diagnostics;
using System.Text.Json;

namespace SieveQ.Cli.Tests;

/// <summary>
/// `sieveq bench e2e --rules` through the real CLI, shortened: a direct run, a routes-only deployment, and
/// the A/B deployment whose rule set is pushed through the ordering between phases. Checks that both arms
/// were measured under the versions the switches installed, and that the figures reach the JSON.
/// </summary>
public sealed class BenchE2eRulesTests
{
    [Fact]
    public async Task The_rules_cost_is_measured_in_one_deployment_switching_rule_sets_between_phases()
    {
        var dir = Directory.CreateTempSubdirectory("sieveq-bench-ab-").FullName;
        try
        {
            var json = Path.Combine(dir, "ab.json");
            // Phases of 8 s: a rule-set switch through the ordering took a whole 4 s phase under a load of 20, which
            // the run then skips.
            string[] args = ["bench", "e2e", "--size", "200", "--rate", "200", "--warmup", "3s", "--duration", "16s", "--phase", "8s",
                "--rules", RulesCheckTests.Samples("patterns-1000.json"), "--json", json];
            using var process = Process.Start(SieveqProcess.Info(args))!;
            var stdout = process.StandardOutput.ReadToEndAsync();
            var stderr = process.StandardError.ReadToEndAsync();
            using (var limit = new CancellationTokenSource(TimeSpan.FromMinutes(5)))
            {
                await process.WaitForExitAsync(limit.Token);
            }
            var output = await stdout + await stderr;
            Assert.True(process.ExitCode == 0, output);

            Assert.Contains("rules A/B    one deployment, 2 phases of 8 s in ABBA order", output, StringComparison.Ordinal);
            // Primed during the warm-up with v2 (the rule set) and v3 (without patterns), then measured under
            // v4 (the rule set) and v5 (without); the last one still runs at the end.
            Assert.Contains("rules        version 5 running on f+1 replica-SQs", output, StringComparison.Ordinal);
            Assert.Contains("ratio (rules / same rules without patterns, one deployment): p50 latency x", output, StringComparison.Ordinal);

            using var doc = JsonDocument.Parse(await File.ReadAllBytesAsync(json));
            var ab = doc.RootElement.GetProperty("rulesAb");
            var phases = ab.GetProperty("phases").EnumerateArray().ToList();
            Assert.Equal(2, phases.Count);
            Assert.Equal(("+rules", "v4"), (phases[0].GetProperty("arm").GetString(), phases[0].GetProperty("ruleSetVersion").GetString()));
            Assert.Equal(("-patterns", "v5"), (phases[1].GetProperty("arm").GetString(), phases[1].GetProperty("ruleSetVersion").GetString()));
            foreach (var p in phases)
            {
                // 200 msg/s offered over what is left of 8 s after the switch and its settling.
                Assert.InRange(p.GetProperty("delivered").GetInt32(), 100, 1600);
                Assert.True(p.GetProperty("p50Ms").GetDouble() > 0);
            }
            Assert.True(ab.GetProperty("ratioP50").GetDouble() > 0);
            Assert.InRange(ab.GetProperty("ratioThroughput").GetDouble(), 0.8, 1.25);

            // The senders' root signatures are counted over the measured run: at least one per batch of
            // at most 256 messages, and no more than one per message.
            var sieve = doc.RootElement.GetProperty("sieveq");
            var sent = sieve.GetProperty("sent").GetInt64();
            var roots = sieve.GetProperty("senderRootsSigned").GetInt64();
            Assert.InRange(roots, Math.Max(1, (sent + 255) / 256 - 2), sent + 2);  // +-2: a flush may straddle either end
            Assert.Equal((double)sent / roots, sieve.GetProperty("messagesPerRoot").GetDouble(), 6);
            Assert.Equal(JsonValueKind.Null, doc.RootElement.GetProperty("direct").GetProperty("senderRootsSigned").ValueKind);
            Assert.Contains("sender root signatures", output, StringComparison.Ordinal);

            // CPU per delivered message by process kind, from /proc at the start and end of each measured window.
            BenchE2eCpuAssert.EveryKindCosts(sieve, ("replica-sq", 4), ("pre-sq", 2), ("bench", 1), ("total", 7));
            BenchE2eCpuAssert.EveryKindCosts(doc.RootElement.GetProperty("direct"), ("bench", 1), ("total", 1));
            Assert.True(doc.RootElement.GetProperty("ratioCpuPerMessage").GetDouble() > 0);
            Assert.Matches(@"sieveq +CPU per delivered message .*replica-sq x4 \d+ us", output);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }
}
