using SieveQ.Tests.Shared;

namespace SieveQ.Cli.Tests;

/// <summary>
/// `sieveq fw explain` end to end: the real CLI process, a policy JSON, and the driver's core
/// (driver/build/libsieveqfw.so, built with make when missing or stale).
/// </summary>
public sealed class FirewallExplainTests : IDisposable
{
    private const string Curl = @"\device\harddiskvolume2\windows\system32\curl.exe";
    private readonly string dir = Directory.CreateTempSubdirectory("sieveq-fw-explain-").FullName;
    private readonly string policy;

    public FirewallExplainTests()
    {
        policy = Path.Combine(dir, "policy.json");
        File.WriteAllText(policy, """
            {
              "serial": 7,
              "classes": [ { "name": "default", "id": 0 }, { "name": "web", "id": 3 } ],
              "applications": [
                { "id": 11, "path": "\\device\\harddiskvolume2\\windows\\system32\\curl.exe", "class": "web",
                  "allow": [ { "id": 21, "remote": "192.0.2.0/24", "protocol": "tcp", "ports": "443" },
                             { "id": 22, "remote": "any", "protocol": "udp", "ports": "123" } ] }
              ],
              "hierarchy": [ { "admit": [ "default", "web" ] } ]
            }
            """);
    }

    public void Dispose() => Directory.Delete(dir, recursive: true);

    [Fact]
    public async Task Names_the_deciding_rule_for_an_allowed_connection()
    {
        var (code, stdout, _) = await RunAsync("fw", "explain", Curl, "192.0.2.44", "--policy", policy, "--port", "443");
        Assert.Equal(0, code);
        Assert.Equal("allow: an allow rule matches (rule 21, application 11, class 3, level 0)", stdout.Trim());
    }

    [Fact]
    public async Task Protocol_and_port_select_the_rule()
    {
        var (code, stdout, _) = await RunAsync("fw", "explain", Curl, "198.51.100.1", "--policy", policy, "--port", "123", "--proto", "udp");
        Assert.Equal(0, code);
        Assert.StartsWith("allow: an allow rule matches (rule 22,", stdout.Trim(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Says_why_a_connection_is_blocked()
    {
        var (code, stdout, _) = await RunAsync("fw", "explain", Curl, "192.0.2.44", "--policy", policy, "--port", "22");
        Assert.Equal(1, code);
        Assert.Equal("block: the application is known but no rule covers this remote (no rule, application 11, class 3, level 0)", stdout.Trim());

        (code, stdout, _) = await RunAsync("fw", "explain", @"\device\x\evil.exe", "192.0.2.44", "--policy", policy);
        Assert.Equal(1, code);
        Assert.StartsWith("block: no application in the policy matches this process", stdout.Trim(), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("not-an-ip", "443", "tcp", "remote must be an IP address")]
    [InlineData("192.0.2.1", "70000", "tcp", "--port must be 0 to 65535")]
    [InlineData("192.0.2.1", "443", "sctp", "--proto must be tcp or udp")]
    public async Task Rejects_malformed_arguments_with_a_clear_error(string remote, string port, string proto, string error)
    {
        var (code, stdout, stderr) = await RunAsync("fw", "explain", Curl, remote, "--policy", policy, "--port", port, "--proto", proto);
        Assert.Equal(2, code);
        Assert.Empty(stdout.Trim());
        Assert.Contains(error, stderr, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Rejects_a_malformed_hash_a_missing_file_and_an_invalid_policy()
    {
        var (code, _, stderr) = await RunAsync("fw", "explain", Curl, "192.0.2.1", "--policy", policy, "--sha256", "abc");
        Assert.Equal((2, true), (code, stderr.Contains("--sha256 must be 64 hexadecimal digits", StringComparison.Ordinal)));

        (code, _, stderr) = await RunAsync("fw", "explain", Curl, "192.0.2.1", "--policy", Path.Combine(dir, "absent.json"));
        Assert.Equal((2, true), (code, stderr.Contains("policy file not found", StringComparison.Ordinal)));

        string bad = Path.Combine(dir, "bad.json");
        await File.WriteAllTextAsync(bad, """{ "classes": [ { "name": "default" } ], "hierarchy": [ { "admit": [ "nope" ] } ] }""");
        (code, _, stderr) = await RunAsync("fw", "explain", Curl, "192.0.2.1", "--policy", bad);
        Assert.Equal((2, true), (code, stderr.Contains("policy rejected", StringComparison.Ordinal)));
    }


    private static Task<(int Code, string Stdout, string Stderr)> RunAsync(params string[] args) =>
        SieveqProcess.RunAsync(args, new Dictionary<string, string> { ["SIEVEQ_FW_LIBRARY"] = DriverLibrary.LibraryPath });
}
