using System.Text.Json;

namespace SieveQ.Cli.Tests;

/// <summary>`sieveq bench rules` through the real CLI, one short case: three engines measured, agreeing, in the JSON.</summary>
public sealed class BenchRulesTests
{
    [Fact]
    public async Task The_screened_automaton_the_plain_one_and_kmp_are_measured_in_one_run()
    {
        var dir = Directory.CreateTempSubdirectory("sieveq-bench-rules-").FullName;
        try
        {
            var json = Path.Combine(dir, "rules.json");
            var (code, stdout, stderr) = await SieveqProcess.RunAsync(
                ["bench", "rules", "--patterns", "100", "--sizes", "500", "--duration-per-case", "200ms", "--json", json]);
            Assert.True(code == 0, stdout + stderr);
            Assert.Contains("unscreened ns/msg", stdout, StringComparison.Ordinal);

            using var doc = JsonDocument.Parse(await File.ReadAllBytesAsync(json));
            var c = Assert.Single(doc.RootElement.GetProperty("cases").EnumerateArray());
            Assert.Equal(100, c.GetProperty("patterns").GetInt32());
            Assert.Equal(500, c.GetProperty("payloadBytes").GetInt32());
            foreach (var engine in new[] { "ahoCorasick", "ahoCorasickUnscreened", "kmp" })
            {
                Assert.True(c.GetProperty(engine).GetProperty("evaluated").GetInt64() > 0, engine);
            }
            Assert.True(c.GetProperty("prefilterGain").GetDouble() > 0);
        }
        finally
        {
            Directory.Delete(dir, true);
        }
    }
}
