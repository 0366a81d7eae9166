using System.Security.Cryptography;
using System.Text;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Hosting.Keys;
using SieveQ.Sieve.Keys;
using SieveQ.Deployment;
using SieveQ.PreSq;
using SieveQ.Rules;
using SieveQ.Rules.Signing;

namespace SieveQ.ReplicaSq.Tests;

/// <summary>The cluster started with an open rule set (version 1), so that a push has something to replace.</summary>
public sealed class RulesReplicaSqCluster : ReplicaSqCluster
{
    public static readonly byte[] Open = """
        { "schema": "sieveq-ruleset/v1", "version": 1, "name": "open",
          "rules": [{ "name": "open", "action": "allow", "from": "any", "to": "any" }] }
        """u8.ToArray();

    public static readonly byte[] Screened = """
        { "schema": "sieveq-ruleset/v1", "version": 2, "name": "screened",
          "patternSets": [{ "name": "bad", "literals": ["EVIL"] }],
          "rules": [{ "name": "screen", "action": "allow", "from": "any", "to": "any", "rejectPatterns": ["bad"] }] }
        """u8.ToArray();

    protected override byte[]? RuleSet => Open;

    /// <summary>A message from sender 1 with this text, ordered alone; the result every replica agreed on.</summary>
    public Task<ExecuteResult> SendTextAsync(string text) => SubmitAsync(Message(1, NextSeq(1), Encoding.UTF8.GetBytes(text)));

    /// <summary>
    /// Every replica reaches the value. A client's answer needs only f+1 matching replies, so the slowest
    /// replica may still be executing the command when the answer arrives; it must catch up, not stay behind.
    /// </summary>
    public async Task AssertAllReplicasAsync(string counter, long expected)
    {
        var deadline = Environment.TickCount64 + 10_000;
        long[] now;
        while ((now = Hosts.Select(h => h.Health().Counters.GetValueOrDefault(counter)).ToArray()).Any(v => v != expected)
            && Environment.TickCount64 < deadline)
        {
            await Task.Delay(20);
        }
        Assert.All(now, v => Assert.Equal(expected, v));
    }

    /// <summary>FILE and FILE.sig, the signature over the document's canonical form.</summary>
    public static async Task WriteSignedAsync(string file, byte[] json, ECDsa signer)
    {
        await File.WriteAllBytesAsync(file, json);
        var canonical = RuleSetLoader.CompileUnsigned(json).Document.CanonicalBytes;
        await File.WriteAllBytesAsync(file + SignatureSidecar.Extension, RuleSetSigner.Sign(canonical, signer).ToJson());
    }
}

/// <summary>
/// `sieveq rules push` and `rollback` end to end: the command is built and signed as the CLI does,
/// carried by a real pre-SQ host into the ordering of four real replica-SQ hosts (all in this process,
/// over loopback), and the rules are then enforced by every replica.
/// </summary>
public sealed class RulePushTests : IClassFixture<RulesReplicaSqCluster>
{
    private readonly RulesReplicaSqCluster _c;

    public RulePushTests(RulesReplicaSqCluster c) => _c = c;

    private Task<ExecuteResult> SendAsync(string text) => _c.SendTextAsync(text);

    private Task AllReplicasAsync(string counter, long expected) => _c.AssertAllReplicasAsync(counter, expected);

    [Fact]
    public async Task A_rule_set_pushed_through_a_pre_sq_is_enforced_by_every_replica_and_rolled_back()
    {
        var cfg = _c.Context.Config;
        // The test's own ordering client is pre-SQ 0; the real pre-SQ host is the other one. Pre-SQ 0 has no
        // server, so the publisher's first attempt fails and it must go on to the next pre-SQ.
        await using var preSq = PreSqHost.Create(_c.Context, cfg.PreSqs[1].Id);
        await preSq.StartAsync();
        using var admin = new PemFileKeyStore(Path.Combine(_c.Directory, "keys")).OpenSigningKey(DeploymentRules.AdministratorKeyName);

        Assert.Equal(new ExecuteResult(1, 0, 0), await SendAsync("an EVIL payload under the open rules"));
        var state = await RuleSetPublisher.ReadStateAsync(cfg);
        Assert.Equal(new RulesState(1, 0, 0), state);

        var file = Path.Combine(_c.Directory, "screened.json");
        await RulesReplicaSqCluster.WriteSignedAsync(file, RulesReplicaSqCluster.Screened, admin);
        var (push, _) = RuleSetPublisher.BuildPush(file, admin, cfg, state);
        var (pushed, via) = await RuleSetPublisher.SubmitAsync(cfg, push, TimeSpan.FromSeconds(30));
        Assert.True(pushed.Applied, pushed.Reason);
        Assert.Equal(2, pushed.ActiveVersion);
        Assert.Equal(cfg.PreSqs[1].Name, via);

        // Enforced: the denied pattern is dropped, a clean message accepted, and every replica names the rule.
        Assert.Equal(new ExecuteResult(0, 0, 1), await SendAsync("another EVIL payload"));
        Assert.Equal(new ExecuteResult(1, 0, 0), await SendAsync("a clean payload"));
        await AllReplicasAsync("rules.active_version", 2);
        await AllReplicasAsync("rules.previous_version", 1);
        await AllReplicasAsync("deny.rule.screen", 1);

        // A replayed push is refused by the replicas; a forged one by the pre-SQ before ordering. Version 2 stays.
        var (replayed, _) = await RuleSetPublisher.SubmitAsync(cfg, push, TimeSpan.FromSeconds(30));
        Assert.False(replayed.Applied);
        Assert.Contains("nonce", replayed.Reason, StringComparison.Ordinal);
        using (var intruder = ECDsa.Create(ECCurve.NamedCurves.nistP256))
        {
            var forged = RuleSetCommandCodec.Sign(RuleSetCommandCodec.EncodeRegion(RuleSetOp.Rollback, 2, 1, long.MaxValue, [], []), intruder);
            var e = await Assert.ThrowsAsync<RuleSetPublishException>(() => RuleSetPublisher.SubmitAsync(cfg, forged, TimeSpan.FromSeconds(30)));
            Assert.Contains("not signed by the deployment's administrator key", e.Message, StringComparison.Ordinal);
        }
        Assert.Equal(1, preSq.Metrics.RuleSetCommandsRefused);
        await AllReplicasAsync("rules.active_version", 2);
        await AllReplicasAsync("rules.commands_refused", 1);

        var rollback = RuleSetPublisher.BuildRollback(admin, cfg, await RuleSetPublisher.ReadStateAsync(cfg));
        var (rolledBack, _) = await RuleSetPublisher.SubmitAsync(cfg, rollback, TimeSpan.FromSeconds(30));
        Assert.True(rolledBack.Applied, rolledBack.Reason);
        Assert.Equal(1, rolledBack.ActiveVersion);
        Assert.Equal(new ExecuteResult(1, 0, 0), await SendAsync("EVIL is allowed again after the rollback"));
        await AllReplicasAsync("rules.active_version", 1);
        await AllReplicasAsync("rules.commands_applied", 2);
    }
}
