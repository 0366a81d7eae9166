using System.Text.RegularExpressions;

namespace SieveQ.Policy.Tests;

/// <summary>The documented JSON mirror example must be a policy the agent accepts.</summary>
public partial class ReadmeExampleTests
{
    [Fact]
    public void The_readme_example_is_a_valid_policy()
    {
        string readme = File.ReadAllText(Path.Combine(RepoPaths.PolicyTemplates, "README.md"));
        var block = JsonBlock().Match(readme);
        Assert.True(block.Success, "no ```json block in installer/policy/README.md");

        var evaluation = PolicyJson.Evaluate(block.Groups[1].Value);

        Assert.True(evaluation.IsValid, string.Join("; ", evaluation.Errors));
        Assert.Empty(evaluation.Warnings);
        Assert.Equal(2, evaluation.Policy!.PreSqEndpoints.Length);
    }

    [GeneratedRegex("```json\\n(.*?)```", RegexOptions.Singleline)]
    private static partial Regex JsonBlock();
}
