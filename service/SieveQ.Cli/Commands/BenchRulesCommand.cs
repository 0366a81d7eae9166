using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using System.Text;
using System.Text.Json;
using SieveQ.Sieve.Replica;
using SieveQ.Rules;
using SieveQ.Rules.Evaluation;
using SieveQ.Rules.Matching;
using SieveQ.Rules.Samples;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq bench rules`: rule evaluation throughput (one thread, the replica's execution thread) for
/// pattern-screening rule sets of 1, 100 and 10,000 literals on 100, 500 and 1000-byte random payloads,
/// with the compiled Aho-Corasick engine (positions screened by prefix, as in production), the same
/// automaton without the screen, and the SieveQ paper's method (one KMP scan per pattern, section 6.4),
/// all in the same run on the same rule set and payloads. The engines must agree on every verdict.
/// </summary>
internal static class BenchRulesCommand
{
    private const int PayloadPool = 256;

    public static Command Build()
    {
        var json = new Option<FileInfo?>("--json") { Description = "Write the figures as JSON to this file." };
        var duration = new Option<string>("--duration-per-case") { Description = "Measured time per engine and case, e.g. 2s.", DefaultValueFactory = _ => "2s" };
        var patterns = new Option<string>("--patterns") { Description = "Comma-separated pattern counts.", DefaultValueFactory = _ => "1,100,10000" };
        var sizes = new Option<string>("--sizes") { Description = "Comma-separated payload sizes in bytes.", DefaultValueFactory = _ => "100,500,1000" };
        var cmd = new Command("rules", "Benchmark rule evaluation: Aho-Corasick against per-pattern KMP (the paper's method), same run.")
        {
            json, duration, patterns, sizes,
        };
        cmd.SetAction(async (parse, ct) =>
        {
            var perCase = ClusterSupport.ParseDuration(parse.GetValue(duration)!);
            var counts = ParseList(parse.GetValue(patterns)!);
            var payloads = ParseList(parse.GetValue(sizes)!);
            return await RunAsync(counts, payloads, perCase, parse.GetValue(json), ct).ConfigureAwait(false);
        });
        return cmd;
    }

    private sealed record Engine(double MessagesPerSecond, double NanosPerMessage, long Evaluated);

    private sealed record Case(int Patterns, int PayloadBytes, Engine AhoCorasick, Engine Unfiltered, Engine Kmp)
    {
        public double Ratio => AhoCorasick.MessagesPerSecond / Kmp.MessagesPerSecond;

        public double PrefilterGain => AhoCorasick.MessagesPerSecond / Unfiltered.MessagesPerSecond;
    }

    private static async Task<int> RunAsync(IReadOnlyList<int> counts, IReadOnlyList<int> sizes, TimeSpan perCase, FileInfo? json, CancellationToken ct)
    {
        Console.WriteLine($"bench rules: {string.Join(", ", counts)} literal patterns (5-20 bytes, seed {SampleRuleSets.SampleSeed}) x {string.Join(", ", sizes)}-byte random payloads, "
            + $"{perCase.TotalSeconds:0.###}s per engine and case, one thread, {RuntimeInformation.FrameworkDescription}, {Environment.ProcessorCount} cores");
        Console.WriteLine($"{"patterns",9} {"payload",8} {"aho-corasick msg/s",19} {"ns/msg",9} {"unscreened ns/msg",18} {"kmp msg/s",12} {"ns/msg",11} {"AC/KMP",8} {"screen",7}");
        var cases = new List<Case>();
        foreach (var count in counts)
        {
            var doc = SampleRuleSets.PatternRuleSet(count);
            var ac = RuleSetLoader.CompileUnsigned(doc).CreateEvaluator();
            var unfiltered = RuleSetLoader.CompileUnsigned(doc, new CompileOptions(LiteralEngine.AhoCorasickUnfiltered)).CreateEvaluator();
            var kmp = RuleSetLoader.CompileUnsigned(doc, new CompileOptions(LiteralEngine.Kmp)).CreateEvaluator();
            var planted = Encoding.ASCII.GetBytes(SampleRuleSets.Literals(count, SampleRuleSets.SampleSeed)[count / 2]);
            foreach (var size in sizes)
            {
                ct.ThrowIfCancellationRequested();
                var pool = Payloads(size, count);
                if (!Agree(ac, kmp, pool, planted, size) || !Agree(unfiltered, kmp, pool, planted, size))
                {
                    await Console.Error.WriteLineAsync($"engines disagree at {count} patterns, {size} bytes").ConfigureAwait(false);
                    return 1;
                }
                var a = Measure(ac, pool, perCase);
                var u = Measure(unfiltered, pool, perCase);
                var k = Measure(kmp, pool, perCase);
                var c = new Case(count, size, a, u, k);
                cases.Add(c);
                Console.WriteLine($"{count,9:N0} {size,6} B {a.MessagesPerSecond,19:N0} {a.NanosPerMessage,9:N0} {u.NanosPerMessage,18:N0} {k.MessagesPerSecond,12:N0} {k.NanosPerMessage,11:N0} {c.Ratio,7:N1}x {c.PrefilterGain,6:N1}x");
            }
        }
        if (json is not null)
        {
            var doc = new
            {
                tool = "sieveq bench rules",
                durationPerCaseSeconds = perCase.TotalSeconds,
                patternLengths = "5-20 bytes, printable ASCII, seeded",
                payloads = "uniformly random bytes, seeded; both engines must give the same verdict on each before timing starts",
                ratio = "Aho-Corasick messages per second / KMP messages per second",
                prefilterGain = "Aho-Corasick messages per second / the same automaton's without the prefix screen",
                machine = new { processorCount = Environment.ProcessorCount, os = RuntimeInformation.OSDescription, runtime = RuntimeInformation.FrameworkDescription },
                cases = cases.Select(c => new
                {
                    patterns = c.Patterns,
                    payloadBytes = c.PayloadBytes,
                    ahoCorasick = Figures(c.AhoCorasick),
                    ahoCorasickUnscreened = Figures(c.Unfiltered),
                    kmp = Figures(c.Kmp),
                    ratio = Math.Round(c.Ratio, 2),
                    prefilterGain = Math.Round(c.PrefilterGain, 2),
                }).ToList(),
            };
            await File.WriteAllTextAsync(json.FullName, JsonSerializer.Serialize(doc, new JsonSerializerOptions { WriteIndented = true }), ct).ConfigureAwait(false);
            Console.WriteLine($"wrote {json.FullName}");
        }
        return 0;
    }

    private static object Figures(Engine e) => new
    {
        messagesPerSecond = Math.Round(e.MessagesPerSecond, 1),
        nsPerMessage = Math.Round(e.NanosPerMessage, 1),
        evaluated = e.Evaluated,
    };

    private static byte[][] Payloads(int size, int seed)
    {
        var rng = new Random(size * 7919 + seed);
        var pool = new byte[PayloadPool][];
        for (var i = 0; i < pool.Length; i++)
        {
            pool[i] = new byte[size];
            rng.NextBytes(pool[i]);
        }
        return pool;
    }

    /// <summary>Same verdicts from both engines on the pool, and both catch a planted pattern.</summary>
    private static bool Agree(RuleEvaluator ac, RuleEvaluator kmp, byte[][] pool, byte[] planted, int size)
    {
        var seq = 0L;
        foreach (var p in pool)
        {
            var input = new RuleInput(0, 1, ++seq, 100, p);
            if (ac.Decide(input).Allowed != kmp.Decide(input).Allowed)
            {
                return false;
            }
        }
        var hit = pool[0].ToArray();
        planted.AsSpan(0, Math.Min(planted.Length, size)).CopyTo(hit.AsSpan(Math.Max(0, size - planted.Length) / 2));
        var trap = new RuleInput(0, 1, ++seq, 100, hit);
        return planted.Length > size || (!ac.Decide(trap).Allowed && !kmp.Decide(trap).Allowed);
    }

    private static Engine Measure(RuleEvaluator evaluator, byte[][] pool, TimeSpan duration)
    {
        // Warm-up: tiered JIT and caches, not counted.
        Run(evaluator, pool, TimeSpan.FromMilliseconds(Math.Min(500, duration.TotalMilliseconds / 4)));
        var (count, elapsed) = Run(evaluator, pool, duration);
        return new Engine(count / elapsed.TotalSeconds, elapsed.TotalMilliseconds * 1e6 / count, count);
    }

    private static (long Count, TimeSpan Elapsed) Run(RuleEvaluator evaluator, byte[][] pool, TimeSpan duration)
    {
        var inputs = pool.Select((p, i) => new RuleInput(0, 1, i + 1, 100, p)).ToArray();
        var sw = Stopwatch.StartNew();
        long count = 0;
        var denied = 0;
        var mask = inputs.Length - 1;
        do
        {
            for (var i = 0; i < 32; i++)
            {
                if (!evaluator.Decide(inputs[(int)(count++ & mask)]).Allowed)
                {
                    denied++;
                }
            }
        }
        while (sw.Elapsed < duration);
        GC.KeepAlive(denied);
        return (count, sw.Elapsed);
    }

    private static List<int> ParseList(string text) =>
        [.. text.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).Select(s => int.Parse(s, CultureInfo.InvariantCulture))];
}
