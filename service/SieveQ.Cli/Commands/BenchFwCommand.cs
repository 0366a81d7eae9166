using System.CommandLine;
using System.Text.Json;
using SieveQ.Cli.Bench;

namespace SieveQ.Cli.Commands;

/// <summary>
/// `sieveq bench fw`: layer 0's costs in one run — classification time per connection at 1, 1,000 and
/// 100,000 rules for the driver's hashed classifier next to a linear rule list (the EFW/ADF failure mode),
/// how each grows, the per-packet token-bucket decision and the flow table's memory per million flows.
/// Runs the C core's benchmark (driver/bench) from the source checkout and reprints its figures.
/// </summary>
internal static class BenchFwCommand
{
    public static Command Build()
    {
        var json = new Option<FileInfo?>("--json") { Description = "Write the figures as JSON to this file." };
        var cmd = new Command("fw", "Benchmark the firewall core: classifier vs linear list at 1/1k/100k rules, token bucket, flow memory.") { json };
        cmd.SetAction(async (parse, ct) => await RunAsync(parse.GetValue(json), ct).ConfigureAwait(false));
        return cmd;
    }

    private sealed record Row(int Rules, double HashedNs, double LinearNs, double LinearOverHashed);

    private sealed record Report(IReadOnlyList<Row> Classifier, double HashedGrowth, double LinearGrowth,
        double TokenBucketNsPerPacket, double PacketPathNsPerPacket, double FlowBytes, double MbPerMillionFlows);

    private static async Task<int> RunAsync(FileInfo? json, CancellationToken ct)
    {
        string? driver = DriverBench.FindDriverDirectory(AppContext.BaseDirectory, Environment.CurrentDirectory);
        if (driver is null)
        {
            await Console.Error.WriteLineAsync($"bench fw needs the source checkout: no driver/Makefile above {AppContext.BaseDirectory} or {Environment.CurrentDirectory}").ConfigureAwait(false);
            return 2;
        }
        DriverBenchFigures figures;
        try
        {
            figures = await DriverBench.RunAsync(driver, Console.Out, ct).ConfigureAwait(false);
        }
        catch (Exception e) when (e is InvalidOperationException or JsonException or IOException)
        {
            await Console.Error.WriteLineAsync($"bench fw: {e.Message}").ConfigureAwait(false);
            return 1;
        }
        var report = Summarise(figures);
        Print(report);
        if (json is not null)
        {
            await using var stream = json.Create();
            await JsonSerializer.SerializeAsync(stream, report, JsonOptions, ct).ConfigureAwait(false);
            Console.WriteLine($"wrote {json.FullName}");
        }
        return 0;
    }

    private static readonly JsonSerializerOptions JsonOptions = new() { WriteIndented = true, PropertyNamingPolicy = JsonNamingPolicy.SnakeCaseLower };

    private static Report Summarise(DriverBenchFigures f)
    {
        var rows = f.Classifier.OrderBy(c => c.Rules).Select(c => new Row(c.Rules, c.HashedNs, c.LinearNs, c.LinearNs / c.HashedNs)).ToList();
        Row first = rows[0], last = rows[^1];
        return new Report(rows, last.HashedNs / first.HashedNs, last.LinearNs / first.LinearNs, f.BucketNs, f.PacketNs, f.FlowBytes, f.MbPerMillionFlows);
    }

    private static void Print(Report r)
    {
        Console.WriteLine($"{"rules",9} {"hashed ns/conn",15} {"linear ns/conn",15} {"linear/hashed",14}");
        foreach (var row in r.Classifier)
        {
            Console.WriteLine($"{row.Rules,9:N0} {row.HashedNs,15:N1} {row.LinearNs,15:N1} {row.LinearOverHashed,13:N2}x");
        }
        int top = r.Classifier[^1].Rules, bottom = r.Classifier[0].Rules;
        Console.WriteLine($"growth {bottom:N0} -> {top:N0} rules: hashed x{r.HashedGrowth:N2} (goal <= 2, {(r.HashedGrowth <= 2 ? "met" : "NOT met")}), linear list x{r.LinearGrowth:N0}");
        Console.WriteLine($"token bucket decision: {r.TokenBucketNsPerPacket:N1} ns/packet (goal < 50)");
        Console.WriteLine($"packet path (flow lookup + class buckets, 50k flows): {r.PacketPathNsPerPacket:N1} ns/packet");
        Console.WriteLine($"flow table: {r.FlowBytes:N1} bytes per flow, {r.MbPerMillionFlows:N1} MB per million flows");
    }
}
