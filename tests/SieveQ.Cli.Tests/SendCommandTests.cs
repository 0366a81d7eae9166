namespace SieveQ.Cli.Tests;

/// <summary>`sieveq send` refuses what it cannot send with a clear error and exit code 2, before contacting anything.</summary>
public class SendCommandTests
{
    public static TheoryData<string[], string> Malformed => new()
    {
        { ["--sender", "1", "--receiver", "100"], "exactly one of --text or --file" },
        { ["--sender", "1", "--receiver", "100", "--text", "a", "--file", "/etc/hostname"], "exactly one of --text or --file" },
        { ["--sender", "1", "--receiver", "100", "--file", "/nonexistent/message.bin"], "does not exist" },
        { ["--sender", "1", "--receiver", "100", "--text", "a", "--count", "0"], "--count must be 1..10000" },
        { ["--sender", "1", "--receiver", "100", "--text", "a", "--timeout", "soon"], "is not a duration" },
        { ["--sender", "1", "--receiver", "100", "--text", "a", "--timeout", "0s"], "--timeout must be above 0" },
        { ["--sender", "1", "--receiver", "100", "--text", "a", "--deployment", "/nonexistent/deployment"], "error: " },
    };

    [Theory]
    [MemberData(nameof(Malformed))]
    public async Task Refuses_malformed_arguments(string[] args, string expected)
    {
        var (code, stdout, stderr) = await SieveqProcess.RunAsync(["send", .. args]);
        Assert.True(code == 2, $"exit {code}: {stdout}{stderr}");
        Assert.Contains(expected, stderr, StringComparison.Ordinal);
    }
}
