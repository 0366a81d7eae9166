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

/// <summary>
/// Group Policy's rule-set location end to end: the agent's follower reads a signed rule set from a file,
/// checks it against the pinned signer and publishes it through a real pre-SQ host into the ordering of four
/// real replica-SQ hosts, which then enforce it; it sends each document once, cannot undo an administrator's
/// rollback, and never sends what fails its checks.
/// </summary>
public sealed class PublishedRuleSetTests : IClassFixture<RulesReplicaSqCluster>
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);
    private readonly RulesReplicaSqCluster _c;

    public PublishedRuleSetTests(RulesReplicaSqCluster c) => _c = c;

    private static byte[] Version(int version) => Encoding.UTF8.GetBytes(Encoding.UTF8.GetString(RulesReplicaSqCluster.Screened)
        .Replace("\"version\": 2", $"\"version\": {version}", StringComparison.Ordinal));

    [Fact]
    public async Task A_rule_set_at_the_policys_location_is_published_once_enforced_everywhere_and_a_rollback_sticks()
    {
        var cfg = _c.Context.Config;
        await using var preSq = PreSqHost.Create(_c.Context, cfg.PreSqs[1].Id);
        await preSq.StartAsync();
        using var admin = new PemFileKeyStore(Path.Combine(_c.Directory, "keys")).OpenSigningKey(DeploymentRules.AdministratorKeyName);
        var pinned = SignerKey.Of(admin).SpkiBase64;
        var location = Path.Combine(_c.Directory, "published", "ruleset.json");
        Directory.CreateDirectory(Path.GetDirectoryName(location)!);

        await using (var follower = new PublishedRuleSetFollower(cfg, submitTimeout: Timeout))
        {
            Assert.Equal(PublishedRuleSetStatus.NotConfigured, (await follower.CheckAsync()).Status);
            follower.Follow(location, pinned);
            var missing = await follower.CheckAsync();
            Assert.Equal(PublishedRuleSetStatus.Unreachable, missing.Status);
            Assert.Contains("ruleset.json", missing.Detail, StringComparison.Ordinal);

            await RulesReplicaSqCluster.WriteSignedAsync(location, RulesReplicaSqCluster.Screened, admin);
            var applied = await follower.CheckAsync();
            Assert.Equal(PublishedRuleSetStatus.Applied, applied.Status);
            Assert.Equal(2, applied.Version);
            await _c.AssertAllReplicasAsync("rules.active_version", 2);
            Assert.Equal(new ExecuteResult(0, 0, 1), await _c.SendTextAsync("an EVIL payload under the published rules"));

            // The same document is settled: the next poll sends nothing.
            Assert.Equal(PublishedRuleSetStatus.Unchanged, (await follower.CheckAsync()).Status);
            Assert.Equal(1, preSq.Metrics.RuleSetCommandsOrdered);

            // A document the pinned signer did not sign is refused here and never reaches the ordering.
            using var intruder = ECDsa.Create(ECCurve.NamedCurves.nistP256);
            await RulesReplicaSqCluster.WriteSignedAsync(location, Version(3), intruder);
            var forged = await follower.CheckAsync();
            Assert.Equal(PublishedRuleSetStatus.Refused, forged.Status);
            Assert.Equal(1, preSq.Metrics.RuleSetCommandsOrdered);
        }

        // Sent straight to the pre-SQ, a forged publish is refused before ordering.
        using (var intruder = ECDsa.Create(ECCurve.NamedCurves.nistP256))
        {
            var json = Version(3);
            var sidecar = RuleSetSigner.Sign(RuleSetLoader.CompileUnsigned(json).Document.CanonicalBytes, intruder).ToJson();
            var e = await Assert.ThrowsAsync<RuleSetPublishException>(() => RuleSetPublisher.SubmitAsync(cfg, RuleSetCommandCodec.EncodePublish(3, json, sidecar), Timeout));
            Assert.Contains("published rule set refused", e.Message, StringComparison.Ordinal);
        }

        // The administrator rolls back; a host that starts again with the policy still pointing at version 2 cannot undo it.
        await RulesReplicaSqCluster.WriteSignedAsync(location, RulesReplicaSqCluster.Screened, admin);
        var (rolledBack, _) = await RuleSetPublisher.SubmitAsync(cfg, RuleSetPublisher.BuildRollback(admin, cfg, await RuleSetPublisher.ReadStateAsync(cfg)), Timeout);
        Assert.True(rolledBack.Applied, rolledBack.Reason);
        await using (var restarted = new PublishedRuleSetFollower(cfg, submitTimeout: Timeout))
        {
            restarted.Follow(location, pinned);
            var refused = await restarted.CheckAsync();
            Assert.Equal(PublishedRuleSetStatus.RefusedByReplicas, refused.Status);
            Assert.Contains("not above the highest version run", refused.Detail, StringComparison.Ordinal);
            await _c.AssertAllReplicasAsync("rules.active_version", 1);
            Assert.Equal(new ExecuteResult(1, 0, 0), await _c.SendTextAsync("EVIL passes after the rollback"));

            // Publishing a newer version moves every replica forward again.
            await RulesReplicaSqCluster.WriteSignedAsync(location, Version(3), admin);
            var newer = await restarted.CheckAsync();
            Assert.Equal(PublishedRuleSetStatus.Applied, newer.Status);
            await _c.AssertAllReplicasAsync("rules.active_version", 3);
        }
    }
}
