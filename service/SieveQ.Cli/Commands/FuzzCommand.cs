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
        var codec = new Command("codec", "Fuzz MessageCodec.Decode and the authenticated frame reader; only MalformedMessageException may escape.") { iterations, seed };
        codec.SetAction(parse =>
        {
            var s = parse.GetValue(seed) ?? Random.Shared.Next();
            var n = parse.GetValue(iterations);
            var started = DateTime.UtcNow;
            var report = CodecFuzzer.Run(n, s);
            foreach (var f in report.Failures)
            {
                Console.WriteLine($"FAIL {f}");
            }
            Console.WriteLine($"fuzz codec: seed {s}, {report.Iterations} inputs, {report.Accepted} decoded, {report.Rejected} rejected as malformed, {report.Failures.Count} failures in {(DateTime.UtcNow - started).TotalSeconds:F1}s");
            if (!report.Passed)
            {
                Console.WriteLine($"replay: sieveq fuzz codec --iterations {n} --seed {s}");
            }
            return report.Passed ? 0 : 1;
        });
        fuzz.Subcommands.Add(codec);
        var wal = new Command("wal", "Fuzz the write-ahead log reader with damaged segments; it must never throw.") { iterations, seed };
        wal.SetAction(parse =>
        {
            var s = parse.GetValue(seed) ?? Random.Shared.Next();
            var n = parse.GetValue(iterations);
            var started = DateTime.UtcNow;
            var report = WalFuzzer.Run(n, s);
            foreach (var f in report.Failures)
            {
                Console.WriteLine($"FAIL {f}");
            }
            Console.WriteLine($"fuzz wal: seed {s}, {report.Iterations} segments, {report.Accepted} records recovered, {report.Rejected} segments cut at damage, {report.Failures.Count} failures in {(DateTime.UtcNow - started).TotalSeconds:F1}s");
            if (!report.Passed)
            {
                Console.WriteLine($"replay: sieveq fuzz wal --iterations {n} --seed {s}");
            }
            return report.Passed ? 0 : 1;
        });
        fuzz.Subcommands.Add(wal);
        return fuzz;
    }
}
