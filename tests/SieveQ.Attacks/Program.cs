using System.CommandLine;
using SieveQ.Attacks;
using SieveQ.Attacks.Attacks;
using SieveQ.Deployment;

// The attack benchmark (docs/attacks.md). `compromised-pre-sq` and `compromised-replica-sq` are the compromised component processes the benchmark starts.
if (args.Length > 0 && args[0] == CompromisedPreSqProcess.Command)
{
    return await CompromisedPreSqProcess.RunAsync(args[1..]);
}
if (args.Length > 0 && args[0] == CompromisedReplicaSqProcess.Command)
{
    return await CompromisedReplicaSqProcess.RunAsync(args[1..]);
}

var kind = new Option<string[]>("--kind")
{
    Description = $"The attack: {string.Join(", ", AttackKinds.Names)}. Several (comma-separated, or the option repeated) run one after the other on one deployment, each in its own window.",
    Required = true,
};
var rate = new Option<int>("--rate") { Description = "Legitimate messages per second, split over two senders.", DefaultValueFactory = _ => 1_000 };
var size = new Option<int>("--size") { Description = "Legitimate message size in bytes.", DefaultValueFactory = _ => 500 };
var warmup = new Option<string>("--warmup") { Description = "Unmeasured load before the measured run (JIT of seven fresh processes on two cores).", DefaultValueFactory = _ => "15s" };
var before = new Option<string>("--before") { Description = "Measured time before the attack, and between two attacks.", DefaultValueFactory = _ => "20s" };
var during = new Option<string>("--during") { Description = "Length of each attack.", DefaultValueFactory = _ => "60s" };
var after = new Option<string>("--after") { Description = "Measured time after the (last) attack.", DefaultValueFactory = _ => "20s" };
var attackRate = new Option<int>("--attack-rate") { Description = "Frames per second of a flooding attacker (compromised-sender, unauthenticated-flood).", DefaultValueFactory = _ => 5_000 };
var noCountermeasures = new Option<bool>("--no-countermeasures") { Description = "Switch the countermeasure off where it can be (compromised-sender: the pre-SQs keep their default grant)." };
var json = new Option<FileInfo?>("--json") { Description = "Write the figures as JSON." };
var plot = new Option<FileInfo?>("--plot") { Description = "Write a PNG time series (legitimate msg/s, attack rate, p50/p99 per second)." };
var keep = new Option<bool>("--keep") { Description = "Keep the deployment directory (components' logs) afterwards." };
var logLevel = new Option<string>("--log-level") { Description = "Components' log level (logs in the deployment's logs folder; see --keep).", DefaultValueFactory = _ => "warning" };
var root = new RootCommand("sieveq bench attack: the deployment of `sieveq up` under a steady legitimate load, one attack in the middle of the run, or several one after the other (test code; docs/attacks.md).")
{
    kind, rate, size, warmup, before, during, after, attackRate, noCountermeasures, json, plot, keep, logLevel,
};
root.SetAction(async (parse, ct) =>
{
    AttackSettings s;
    try
    {
        s = new AttackSettings(AttackKinds.ParseList(parse.GetValue(kind)!), parse.GetValue(rate), parse.GetValue(size), Duration(parse.GetValue(warmup)!),
            Duration(parse.GetValue(before)!), Duration(parse.GetValue(during)!), Duration(parse.GetValue(after)!), parse.GetValue(attackRate),
            !parse.GetValue(noCountermeasures), parse.GetValue(keep), parse.GetValue(logLevel)!);
    }
    catch (FormatException e)
    {
        await Console.Error.WriteLineAsync($"error: {e.Message}");
        return 2;
    }
    if (s.Problem() is { } problem)
    {
        await Console.Error.WriteLineAsync($"error: {problem}");
        return 2;
    }
    AttackPlan plan;
    try
    {
        plan = AttackPlan.Create(s);
    }
    catch (FormatException e)
    {
        await Console.Error.WriteLineAsync($"error: {e.Message}");
        return 2;
    }
    await using var planned = plan;
    AttackFigures figures;
    try
    {
        figures = await AttackRun.RunAsync(plan, Console.Out, ct);
    }
    catch (DeploymentException e)
    {
        await Console.Error.WriteLineAsync($"error: {e.Message}");
        return 1;
    }
    AttackReport.Print(figures, Console.Out);
    if (parse.GetValue(json) is { } j)
    {
        await File.WriteAllTextAsync(j.FullName, AttackReport.Json(figures), ct);
        Console.WriteLine($"wrote {j.FullName}");
    }
    if (parse.GetValue(plot) is { } p)
    {
        await File.WriteAllBytesAsync(p.FullName, AttackReport.Plot(figures), ct);
        Console.WriteLine($"wrote {p.FullName}");
    }
    return figures.ExactlyOnce ? 0 : 3;
});
return await root.Parse(args).InvokeAsync();

static TimeSpan Duration(string text) => DurationText.Parse(text);
