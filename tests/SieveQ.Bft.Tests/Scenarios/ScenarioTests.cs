using System.Runtime.CompilerServices;

namespace SieveQ.Bft.Tests.Scenarios;

/// <summary>
/// Runs every Scenarios/*.txt file against real cores (see <see cref="ScenarioCluster"/>) and compares each
/// step's output with the expectation in the file. With SIEVEQ_REWRITE_SCENARIOS=1 the files in the source
/// tree are rewritten with the actual output instead: review the diff before committing it.
/// </summary>
public class ScenarioTests
{
    public static TheoryData<string> Files() =>
        [.. Directory.GetFiles(Path.Combine(AppContext.BaseDirectory, "Scenarios"), "*.txt").Select(f => Path.GetFileName(f)).Order(StringComparer.Ordinal)];

    [Theory]
    [MemberData(nameof(Files))]
    public void Scenario(string file)
    {
        var rewrite = Environment.GetEnvironmentVariable("SIEVEQ_REWRITE_SCENARIOS") == "1";
        // Rewriting reads the source file, not the copy made at build time, so edits since the build are kept.
        var directory = rewrite ? SourceDirectory() : Path.Combine(AppContext.BaseDirectory, "Scenarios");
        var steps = ScenarioScript.Parse(File.ReadAllText(Path.Combine(directory, file)));
        var cluster = new ScenarioCluster();
        var results = new List<(ScenarioStep Step, IReadOnlyList<string> Output)>();
        var mismatches = new List<string>();
        foreach (var step in steps)
        {
            var output = cluster.Run(step.Command);
            results.Add((step, output));
            if (!output.SequenceEqual(step.Expected))
            {
                mismatches.Add($"{file}:{step.Line}: {step.Command}\n{ScenarioScript.Diff(step.Expected, output)}");
            }
        }
        if (rewrite)
        {
            File.WriteAllText(Path.Combine(directory, file), ScenarioScript.Render(results));
            return;
        }
        Assert.True(mismatches.Count == 0, "scenario output differs (- expected, + actual):\n" + string.Join('\n', mismatches));
    }

    private static string SourceDirectory([CallerFilePath] string path = "") => Path.GetDirectoryName(path)!;
}
