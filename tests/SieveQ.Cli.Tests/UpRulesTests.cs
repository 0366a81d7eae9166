namespace SieveQ.Cli.Tests;

/// <summary>
/// The operator's path for rule sets, all through the real CLI: `sieveq up --rules` starts a whole
/// local deployment (every component its own process) enforcing a rule set, then `sieveq rules
/// sign`, `push` and `rollback` change it while it runs, and a push that does not raise the version
/// is refused with the running version kept.
/// </summary>
public sealed class UpRulesTests
{
    private const string Open = """
        { "schema": "sieveq-ruleset/v1", "version": 1, "name": "open",
          "rules": [{ "name": "open", "action": "allow", "from": "any", "to": "any" }] }
        """;

    private const string Screened = """
        { "schema": "sieveq-ruleset/v1", "version": 2, "name": "screened",
          "patternSets": [{ "name": "bad", "literals": ["EVIL"] }],
          "rules": [{ "name": "screen", "action": "allow", "from": "any", "to": "any", "rejectPatterns": ["bad"] }] }
        """;

    [Fact]
    public async Task Up_with_a_rule_set_then_push_and_rollback_through_the_cli()
    {
        var dir = Directory.CreateTempSubdirectory("sieveq-up-rules-").FullName;
        var deployment = Path.Combine(dir, "deployment");
        var open = Path.Combine(dir, "open.json");
        var screened = Path.Combine(dir, "screened.json");
        await File.WriteAllTextAsync(open, Open);
        await File.WriteAllTextAsync(screened, Screened);
        var passed = false;
        await using var up = UpProcess.Start(["--dir", deployment, "--rules", open, "--rate", "0", "--duration", "300s"]);
        try
        {
            Assert.True(await up.WaitHealthyAsync(), $"sieveq up did not report healthy:\n{up.Text}");
            Assert.Contains("rule set       open version 1", up.Text, StringComparison.Ordinal);

            // A deployment that exists refuses --rules: the running rules change only through the ordering.
            var (code, _, stderr) = await RunAsync("up", "--dir", deployment, "--rules", screened, "--rate", "0", "--duration", "1s");
            Assert.Equal(1, code);
            Assert.Contains("sieveq rules push", stderr, StringComparison.Ordinal);

            var key = Path.Combine(deployment, "keys", "administrator.pem");
            (code, _, stderr) = await RunAsync("rules", "sign", screened, "--key", key);
            Assert.True(code == 0, stderr);

            (code, var stdout, stderr) = await RunAsync("rules", "push", screened, "--deployment", deployment, "--key", key);
            Assert.True(code == 0, stdout + stderr);
            Assert.Contains("in place of version 1", stdout, StringComparison.Ordinal);
            Assert.Contains("APPLIED", stdout, StringComparison.Ordinal);

            // Pushing the running version again is refused before anything is sent, naming the running version.
            (code, stdout, stderr) = await RunAsync("rules", "push", screened, "--deployment", deployment, "--key", key);
            Assert.Equal(1, code);
            Assert.Contains("version 2 is running, so a push needs a higher version", stderr, StringComparison.Ordinal);

            // `sieveq send` through the agent tells the operator how each message ended: a rule's denial with the
            // rule's words, a refusal at the agent, a delivery; and what it cannot do, before sending anything.
            (code, stdout, stderr) = await RunAsync("send", "--deployment", deployment, "--sender", "1", "--receiver", "100", "--text", "an EVIL payload");
            Assert.True(code == SendCommandExitNotDelivered, stdout + stderr);
            Assert.Contains("rejected by the replica-SQs (RuleDenied)", stdout, StringComparison.Ordinal);
            Assert.Contains("0 delivered, 0 refused, 1 rejected", stdout, StringComparison.Ordinal);
            (code, stdout, stderr) = await RunAsync("send", "--dir", deployment, "--sender", "1", "--receiver", "100", "--text", "a fine payload", "--count", "3");
            Assert.True(code == 0, stdout + stderr);
            Assert.Contains("3 delivered, 0 refused, 0 rejected", stdout, StringComparison.Ordinal);
            (code, stdout, stderr) = await RunAsync("send", "--deployment", deployment, "--sender", "1", "--receiver", "999", "--text", "to nobody");
            Assert.True(code == SendCommandExitNotDelivered, stdout + stderr);
            Assert.Contains("refused by the agent (ReceiverNotEnrolled)", stdout, StringComparison.Ordinal);
            (code, stdout, stderr) = await RunAsync("send", "--deployment", deployment, "--sender", "77", "--receiver", "100", "--text", "x");
            Assert.Equal(2, code);
            Assert.Contains("hosts sender 77 (hosted: 1, 2)", stderr, StringComparison.Ordinal);

            // The rejected message is in the figures `status` prints: stage (f), as the replicas agree on it.
            (code, stdout, stderr) = await RunAsync("status", "--dir", deployment);
            Assert.True(code == 0, stdout + stderr);
            Assert.Contains("ordering: regency ", stdout, StringComparison.Ordinal);
            Assert.Contains("(f) Rules 1,", stdout, StringComparison.Ordinal);
            Assert.Contains("quarantined: 0 sender(s), pre-SQs: none", stdout, StringComparison.Ordinal);
            // The sends above had their verdicts within the last half minute: the agent's sender 1 reports their latency.
            Assert.Matches(@"verdict latency \(numbered to f\+1 replicas' verdict, the last ~1 min, slowest sender 1\): p50 \d+\.\d ms, p99 \d+\.\d ms over [1-9]\d* messages", stdout);
            Assert.Matches(@"last decided \d+, checkpoint \d+; sieve processing", stdout);

            (code, stdout, stderr) = await RunAsync("rules", "rollback", "--deployment", deployment, "--key", key);
            Assert.True(code == 0, stdout + stderr);
            Assert.Contains("from version 2 to version 1", stdout, StringComparison.Ordinal);
            Assert.Contains("APPLIED", stdout, StringComparison.Ordinal);

            // The same through the controller's management API: an operator's key, no administrator key; a viewer's is refused.
            var keys = Path.Combine(deployment, "keys");
            // A version above every one run so far, without a .sig: the controller signs it with the key it holds.
            var third = Path.Combine(dir, "screened-v3.json");
            await File.WriteAllTextAsync(third, Screened.Replace("\"version\": 2", "\"version\": 3", StringComparison.Ordinal));
            (code, stdout, stderr) = await RunAsync("admin", "rules", "push", third, "--reason", "again", "--dir", deployment, "--key", Path.Combine(keys, "management-viewer.pem"));
            Assert.True(code == 1, stdout + stderr);
            Assert.Contains("role viewer is below operator", stderr, StringComparison.Ordinal);
            (code, stdout, stderr) = await RunAsync("admin", "rules", "push", third, "--reason", "again", "--dir", deployment, "--key", Path.Combine(keys, "management-operator.pem"));
            Assert.True(code == 0, stdout + stderr);
            Assert.StartsWith("applied (audit record ", stdout, StringComparison.Ordinal);
            Assert.Contains("version 3", stdout, StringComparison.Ordinal);
            (code, stdout, stderr) = await RunAsync("admin", "rules", "rollback", "--dir", deployment, "--key", Path.Combine(keys, "management-operator.pem"));
            Assert.True(code == 0, stdout + stderr);
            (code, stdout, stderr) = await RunAsync("admin", "audit", "--count", "8", "--dir", deployment, "--key", Path.Combine(keys, "management-viewer.pem"));
            Assert.True(code == 0, stdout + stderr);
            Assert.Matches(@"key [0-9a-f]+ \(operator, operator\) from 127\.0\.0\.1  push-rule-set .*again", stdout);
            passed = true;
        }
        finally
        {
            await up.StopAsync();
            if (passed)
            {
                Directory.Delete(dir, recursive: true);
            }
        }
        // The whole output on failure: a run under heavy load once ended without "stopped." and said nothing more.
        Assert.True(up.Text.Contains("stopped.", StringComparison.Ordinal), $"exit code {up.ExitCode}; output:\n{up.Text}");
    }

    private const int SendCommandExitNotDelivered = 4;

    private static Task<(int Code, string Stdout, string Stderr)> RunAsync(params string[] args) => SieveqProcess.RunAsync(args);
}
