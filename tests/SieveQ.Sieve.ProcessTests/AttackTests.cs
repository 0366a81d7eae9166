using System.Diagnostics;
using System.Reflection;
using System.Text.Json;
using Xunit.Abstractions;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// The attack benchmark (tests/SieveQ.Attacks, docs/attacks.md), shorter: for each attack kind a fresh deployment under
/// a steady legitimate load, 5 s before the attack, 10 s of it, 2 s after. The benchmark's receiver checks every
/// payload; here each run must have delivered every accepted legitimate message exactly once, in order and
/// unaltered, the attack must have happened, and the countermeasure must have counted what it did. Throughput and
/// latency during the attack are the benchmark's to report, not asserted.
/// </summary>
public sealed class AttackTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Bound = TimeSpan.FromMinutes(4);

    public static string AttacksDll =>
        typeof(AttackTests).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "AttacksDll").Value!;

    [Fact]
    public async Task A_tampering_pre_sq_loses_nothing_and_its_copies_are_refused_by_signature()
    {
        using var run = await RunAsync("tampering-presq");
        AssertCounted(run, "replica drop.*.BadSignature");
    }

    [Fact]
    public async Task A_dropping_pre_sq_loses_nothing_because_senders_retransmit_through_the_other()
    {
        using var run = await RunAsync("dropping-presq");
        AssertCounted(run, "sender_retransmissions");
    }

    [Fact]
    public async Task A_compromised_sender_flooding_over_its_grant_is_cut_at_the_pre_sqs_and_loses_nothing()
    {
        using var run = await RunAsync("compromised-sender", "--attack-rate", "3000");
        AssertCounted(run, "pre-sq drop.*.GrantExceeded", "replica drop.*.GrantExceeded");
    }

    [Fact]
    public async Task An_unauthenticated_flood_is_dropped_by_mac_and_loses_nothing()
    {
        using var run = await RunAsync("unauthenticated-flood", "--attack-rate", "5000");
        AssertCounted(run, "pre-sq drop.*.BadMac");
    }

    [Fact]
    public async Task A_slowloris_on_a_pre_sq_loses_nothing_and_its_silent_connections_are_cut()
    {
        using var run = await RunAsync("slowloris", "--during", "15s");
        // The preface deadline (10 s) falls inside the window; the unbound-stream timeout (30 s) does not.
        AssertCounted(run, "pre-sq connections_closed_silent");
        AssertStreamsHeldThenReleased(run);
        AssertRssReported(run);
    }

    [Fact]
    public async Task An_http2_flood_on_a_pre_sq_loses_nothing_and_its_streams_are_refused_or_ended()
    {
        using var run = await RunAsync("h2-flood", "--attack-rate", "3000");
        AssertCounted(run, "attacker rapid-reset connections opened");
        AssertCounted(run, "attacker settings/ping connections opened");
        AssertStreamsHeldThenReleased(run);
        AssertRssReported(run);
    }

    [Fact]
    public async Task Oversize_requests_are_each_refused_with_a_status_and_the_replicas_do_not_stall()
    {
        using var run = await RunAsync("oversize");
        var counts = run.RootElement.GetProperty("countermeasureCounts");
        Assert.True(counts.GetProperty("attacker refused with a status").GetInt64() > 0);
        Assert.Equal(0, counts.GetProperty("attacker NOT refused").GetInt64());
        AssertCounted(run, "pre-sq drop.*.Malformed");
    }

    [Fact]
    public async Task A_byzantine_replica_streaming_corrupted_bodies_changes_nothing_the_receiver_delivers()
    {
        // The countermeasure's proof is RunAsync's own: the liar corrupted bodies (attackApplied) and the run's receiver
        // found every payload intact. A receiver SDK that took a body without checking it against the agreed digest
        // delivers the liar's bytes and fails there. The SDK keeps no count of the bodies it refused (its fetches
        // happen without a liar too), so none is asserted.
        using var run = await RunAsync("byzantine-replica");
        Assert.True(run.RootElement.GetProperty("countermeasureCounts").GetProperty("receiver fetches_answered").GetInt64() > 0,
            "the receiver should have fetched the bodies the liar was designated for from other replicas");
    }

    [Fact]
    public async Task An_attack_not_built_yet_is_refused_with_a_clear_error()
    {
        var (code, _, stderr) = await StartAsync(["--kind", "state-transfer-flood"], TimeSpan.FromSeconds(60));
        Assert.Equal(2, code);
        Assert.Contains("not built yet", stderr, StringComparison.Ordinal);
    }

    /// <summary>Runs one attack, checks the exactly-once verdict from the run's JSON, and returns the document.</summary>
    private async Task<JsonDocument> RunAsync(string kind, params string[] extra)
    {
        var json = Path.Combine(Path.GetTempPath(), $"sieveq-attack-test-{Guid.NewGuid():N}.json");
        try
        {
            // A kind may give its own window (--during); the others take 10 s.
            string[] during = extra.Contains("--during") ? [] : ["--during", "10s"];
            var (code, stdout, stderr) = await StartAsync(
                ["--kind", kind, "--warmup", "5s", "--before", "5s", .. during, "--after", "2s", "--json", json, .. extra], Bound);
            output.WriteLine(stdout);
            output.WriteLine(stderr);
            Assert.True(code == 0, $"the attack run exited with {code}");
            var doc = JsonDocument.Parse(await File.ReadAllTextAsync(json));
            var root = doc.RootElement;
            Assert.True(root.GetProperty("exactlyOnce").GetBoolean());
            Assert.Equal(0, root.GetProperty("lost").GetInt64());
            Assert.Equal(0, root.GetProperty("violations").GetInt64());
            foreach (var s in root.GetProperty("senders").EnumerateArray())
            {
                Assert.True(s.GetProperty("accepted").GetInt64() > 0, "each legitimate sender should have sent");
                Assert.Equal(s.GetProperty("accepted").GetInt64(), s.GetProperty("deliveredInOrder").GetInt64());
            }
            Assert.True(root.GetProperty("attackApplied").GetInt64() > 0, "the attack should have happened");
            return doc;
        }
        finally
        {
            File.Delete(json);
        }
    }

    /// <summary>The countermeasure counted something under one of <paramref name="counters"/> (summed).</summary>
    private static void AssertCounted(JsonDocument run, params string[] counters)
    {
        var counts = run.RootElement.GetProperty("countermeasureCounts");
        var sum = counters.Sum(c => counts.TryGetProperty(c, out var n) ? n.GetInt64() : 0);
        Assert.True(sum > 0, $"the countermeasure should have counted {string.Join(" or ", counters)}: {counts}");
    }

    /// <summary>
    /// The attacked pre-SQ held the attacker's streams during the window (its open_streams gauge rose far above the
    /// legitimate senders' few) and let every one go afterwards: none leaked into its stream table.
    /// </summary>
    private static void AssertStreamsHeldThenReleased(JsonDocument run)
    {
        var counts = run.RootElement.GetProperty("countermeasureCounts");
        var peak = counts.GetProperty("pre-sq open_streams during the attack (peak)").GetInt64();
        var after = counts.GetProperty("pre-sq open_streams after the attack").GetInt64();
        Assert.True(peak > 50, $"the attacker should have held streams on the pre-SQ: {counts}");
        Assert.True(after <= 4, $"the pre-SQ should have released the attacker's streams: {after} still open");
    }

    /// <summary>The attacked process's memory was read every second of the run.</summary>
    private static void AssertRssReported(JsonDocument run)
    {
        Assert.True(run.RootElement.GetProperty("watched").GetString() is { Length: > 0 });
        Assert.All(run.RootElement.GetProperty("perSecond").EnumerateArray(), x => Assert.True(x.GetProperty("rssMiB").GetDouble() > 0));
    }

    private static async Task<(int Code, string Stdout, string Stderr)> StartAsync(IReadOnlyList<string> args, TimeSpan bound)
    {
        if (!File.Exists(AttacksDll))
        {
            throw new FileNotFoundException($"build tests/SieveQ.Attacks first: {AttacksDll} is missing");
        }
        var psi = new ProcessStartInfo("dotnet") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        psi.ArgumentList.Add(AttacksDll);
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        using var p = Process.Start(psi)!;
        using var cts = new CancellationTokenSource(bound);
        var stdout = p.StandardOutput.ReadToEndAsync(cts.Token);
        var stderr = p.StandardError.ReadToEndAsync(cts.Token);
        try
        {
            await p.WaitForExitAsync(cts.Token);
        }
        catch (OperationCanceledException)
        {
            // the run and the components it started go; the assertion on the exit code reports the timeout
            p.Kill(entireProcessTree: true);
            await p.WaitForExitAsync(CancellationToken.None);
            return (-1, "timed out", "");
        }
        return (p.ExitCode, await stdout, await stderr);
    }
}
