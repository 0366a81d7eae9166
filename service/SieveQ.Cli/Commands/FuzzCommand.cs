using System.CommandLine;
using SieveQ.Bft.Hosting.Fuzz;

namespace SieveQ.Cli.Commands;

/// <summary>`sieveq fuzz codec`: random and mutated frames into the message decoder and the frame reader; `sieveq fuzz wal`: damaged log segments into the log reader.</summary>
internal static class FuzzCommand
{
    public static Command Build()
    {
        var fuzz = new Command("fuzz", "Fuzz targets for the parsers that face the network.");
        var iterations = new Option<long>("--iterations") { Description = "Inputs to try.", DefaultValueFactory = _ => 100_000 };
        var seed = new Option<int?>("--seed") { Description = "Random seed (printed, so a failure can be replayed)." };
        fuzz.Subcommands.Add(Target("codec", "Fuzz MessageCodec.Decode and the authenticated frame reader; only MalformedMessageException may escape.",
            CodecFuzzer.Run, r => $"{r.Iterations} inputs, {r.Accepted} decoded, {r.Rejected} rejected as malformed", iterations, seed));
        fuzz.Subcommands.Add(Target("wal", "Fuzz the write-ahead log reader with damaged segments; it must never throw.",
            WalFuzzer.Run, r => $"{r.Iterations} segments, {r.Accepted} records recovered, {r.Rejected} segments cut at damage", iterations, seed));
        return fuzz;
    }

    private static Command Target(string name, string description, Func<long, int, FuzzReport> run, Func<FuzzReport, string> describe, Option<long> iterations, Option<int?> seed)
    {
        var command = new Command(name, description) { iterations, seed };
        command.SetAction(parse =>
        {
            var s = parse.GetValue(seed) ?? Random.Shared.Next();
            var n = parse.GetValue(iterations);
            var started = DateTime.UtcNow;
            var report = run(n, s);
            foreach (var f in report.Failures)
            {
                Console.WriteLine($"FAIL {f}");
            }
            Console.WriteLine($"fuzz {name}: seed {s}, {describe(report)}, {report.Failures.Count} failures in {(DateTime.UtcNow - started).TotalSeconds:F1}s");
            if (!report.Passed)
            {
                Console.WriteLine($"replay: sieveq fuzz {name} --iterations {n} --seed {s}");
            }
            return report.Passed ? 0 : 1;
        });
        return command;
    }
}
