using System.Text;

namespace SieveQ.Bft.Tests.Scenarios;

/// <summary>
/// A scenario file in the style of etcd raft's datadriven tests: blocks of one command line, a line
/// <c>----</c>, and the expected output up to the next blank line. Lines starting with # before a
/// command are comments and are kept when the file is rewritten.
/// </summary>
internal sealed record ScenarioStep(IReadOnlyList<string> Comments, string Command, IReadOnlyList<string> Expected, int Line);

internal static class ScenarioScript
{
    public const string Separator = "----";

    public static List<ScenarioStep> Parse(string text)
    {
        var lines = text.Replace("\r\n", "\n", StringComparison.Ordinal).Split('\n');
        var steps = new List<ScenarioStep>();
        var comments = new List<string>();
        var i = 0;
        while (i < lines.Length)
        {
            var line = lines[i];
            if (line.Length == 0)
            {
                i++;
                continue;
            }
            if (line.StartsWith('#'))
            {
                comments.Add(line);
                i++;
                continue;
            }
            var commandLine = i + 1;
            if (i + 1 >= lines.Length || lines[i + 1] != Separator)
            {
                throw new FormatException($"line {commandLine}: command '{line}' is not followed by '{Separator}'");
            }
            var expected = new List<string>();
            i += 2;
            while (i < lines.Length && lines[i].Length > 0)
            {
                expected.Add(lines[i]);
                i++;
            }
            steps.Add(new ScenarioStep([.. comments], line, expected, commandLine));
            comments.Clear();
        }
        return steps;
    }

    public static string Render(IEnumerable<(ScenarioStep Step, IReadOnlyList<string> Output)> steps)
    {
        var sb = new StringBuilder();
        foreach (var (step, output) in steps)
        {
            if (sb.Length > 0)
            {
                sb.Append('\n');
            }
            foreach (var c in step.Comments)
            {
                sb.Append(c).Append('\n');
            }
            sb.Append(step.Command).Append('\n').Append(Separator).Append('\n');
            foreach (var o in output)
            {
                sb.Append(o).Append('\n');
            }
        }
        return sb.ToString();
    }

    /// <summary>A line-by-line diff of one step: expected lines missing from the output with -, unexpected ones with +.</summary>
    public static string Diff(IReadOnlyList<string> expected, IReadOnlyList<string> actual)
    {
        // Longest common subsequence; scenario outputs are short, so the quadratic table is fine.
        var table = new int[expected.Count + 1, actual.Count + 1];
        for (var a = expected.Count - 1; a >= 0; a--)
        {
            for (var b = actual.Count - 1; b >= 0; b--)
            {
                table[a, b] = expected[a] == actual[b] ? table[a + 1, b + 1] + 1 : Math.Max(table[a + 1, b], table[a, b + 1]);
            }
        }
        var sb = new StringBuilder();
        int i = 0, j = 0;
        while (i < expected.Count || j < actual.Count)
        {
            if (i < expected.Count && j < actual.Count && expected[i] == actual[j])
            {
                sb.Append("  ").Append(expected[i]).Append('\n');
                i++;
                j++;
            }
            else if (i < expected.Count && (j == actual.Count || table[i + 1, j] >= table[i, j + 1]))
            {
                sb.Append("- ").Append(expected[i]).Append('\n');
                i++;
            }
            else
            {
                sb.Append("+ ").Append(actual[j]).Append('\n');
                j++;
            }
        }
        return sb.ToString();
    }
}
