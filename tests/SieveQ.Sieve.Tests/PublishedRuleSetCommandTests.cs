using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// The publish command an agent carries for Group Policy's rule-set location: no command signature, the
/// document's own administrator signature authorises it, and only a version above every version ever run
/// is taken, so replaying it or publishing over an administrator's rollback changes nothing.
/// </summary>
public sealed class PublishedRuleSetCommandTests : IDisposable
{
    private readonly RuleSetWorld _r = new();

    public void Dispose() => _r.Dispose();

    private static byte[] Publish(byte[] json, int version, byte[] sidecar) => RuleSetCommandCodec.EncodePublish(version, json, sidecar);

    private byte[] Published(int version, bool screen = true)
    {
        var json = RuleSetWorld.Document(version, screen);
        return Publish(json, version, RuleSetWorld.Sidecar(json, _r.Admin));
    }

    [Fact]
    public void A_publish_round_trips_without_a_command_signature()
    {
        var json = RuleSetWorld.Document(2, screen: true);
        var sidecar = RuleSetWorld.Sidecar(json, _r.Admin);
        var c = RuleSetCommandCodec.Decode(Publish(json, 2, sidecar));
        Assert.Equal(RuleSetOp.Publish, c.Op);
        Assert.Equal((0, 2, 0L), (c.FromVersion, c.ToVersion, c.Nonce));
        Assert.True(c.Document.Span.SequenceEqual(json));
        Assert.True(c.DocumentSignature.Span.SequenceEqual(sidecar));
        Assert.Equal(0, c.Signature.Length);
    }

    [Fact]
    public void A_publish_claiming_a_from_version_or_nonce_or_carrying_a_signature_is_malformed()
    {
        var json = RuleSetWorld.Document(2, screen: true);
        var sidecar = RuleSetWorld.Sidecar(json, _r.Admin);
        Assert.Throws<ArgumentException>(() => RuleSetCommandCodec.EncodeRegion(RuleSetOp.Publish, 1, 2, 0, json, sidecar));
        Assert.Throws<ArgumentException>(() => RuleSetCommandCodec.EncodeRegion(RuleSetOp.Publish, 0, 2, 7, json, sidecar));
        Assert.Throws<ArgumentException>(() => RuleSetCommandCodec.EncodePublish(0, json, sidecar));

        var good = Publish(json, 2, sidecar);
        // Unsigned fields that say something: fromVersion = 1 (bytes 2..5) and a trailing 64-byte "signature".
        var withFrom = (byte[])good.Clone();
        withFrom[2] = 1;
        var e = Assert.Throws<MalformedEnvelopeException>(() => RuleSetCommandCodec.Decode(withFrom));
        Assert.Contains("both must be 0", e.Message, StringComparison.Ordinal);
        Assert.Throws<MalformedEnvelopeException>(() => RuleSetCommandCodec.Decode(good.Concat(new byte[EnvelopeLimits.SignatureBytes]).ToArray()));
        var badOp = (byte[])good.Clone();
        badOp[1] = 4;
        Assert.Contains("publish", Assert.Throws<MalformedEnvelopeException>(() => RuleSetCommandCodec.Decode(badOp)).Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_published_document_signed_by_the_administrator_is_activated_and_leaves_the_nonce_alone()
    {
        var rules = _r.NewRules();
        var result = rules.Apply(Published(2), nextEvaluation: 10);
        Assert.True(result.Applied, result.Reason);
        Assert.Equal(2, rules.ActiveVersion);
        Assert.Equal(1, rules.Store.Previous?.Version);
        Assert.Equal(0, rules.LastNonce);
        Assert.Contains("published", result.Reason, StringComparison.Ordinal);

        // The administrator's own commands go on as before: against version 2, with any nonce above 0.
        var push = rules.Apply(_r.Push(RuleSetWorld.Document(3, screen: false), from: 2, to: 3, nonce: 5), nextEvaluation: 11);
        Assert.True(push.Applied, push.Reason);
        Assert.Equal(3, rules.ActiveVersion);
    }

    [Fact]
    public void A_published_document_signed_by_another_key_is_refused_and_the_running_version_stays()
    {
        var rules = _r.NewRules();
        var json = RuleSetWorld.Document(2, screen: true);
        var result = rules.Apply(Publish(json, 2, RuleSetWorld.Sidecar(json, _r.Intruder)), nextEvaluation: 10);
        Assert.False(result.Applied);
        Assert.StartsWith("refused: rule set refused", result.Reason, StringComparison.Ordinal);
        Assert.Equal(1, rules.ActiveVersion);

        // The version field must name the document's version.
        var mislabelled = rules.Apply(Publish(json, 3, RuleSetWorld.Sidecar(json, _r.Admin)), nextEvaluation: 11);
        Assert.False(mislabelled.Applied);
        Assert.Contains("document is version 2", mislabelled.Reason, StringComparison.Ordinal);
        Assert.Equal(1, rules.ActiveVersion);
    }

    [Fact]
    public void Replaying_a_publish_or_publishing_over_a_rollback_changes_nothing()
    {
        var rules = _r.NewRules();
        var publish = Published(2);
        Assert.True(rules.Apply(publish, nextEvaluation: 10).Applied);

        var replay = rules.Apply(publish, nextEvaluation: 11);
        Assert.False(replay.Applied);
        Assert.Contains("not above the highest version run", replay.Reason, StringComparison.Ordinal);

        var rollback = rules.Apply(_r.Rollback(from: 2, to: 1, nonce: 1), nextEvaluation: 12);
        Assert.True(rollback.Applied, rollback.Reason);
        Assert.Equal(1, rules.ActiveVersion);
        // Hosts still pointed at version 2 cannot undo the administrator's rollback.
        var again = rules.Apply(publish, nextEvaluation: 13);
        Assert.False(again.Applied);
        Assert.Equal(1, rules.ActiveVersion);

        // A newer published version is taken.
        var newer = rules.Apply(Published(3), nextEvaluation: 14);
        Assert.True(newer.Applied, newer.Reason);
        Assert.Equal(3, rules.ActiveVersion);
    }

    [Fact]
    public void A_replica_restored_from_a_snapshot_refuses_the_same_replay()
    {
        var a = _r.NewRules();
        var publish = Published(2);
        Assert.True(a.Apply(publish, nextEvaluation: 10).Applied);
        var b = _r.NewRules();
        b.RestoreState(a.SnapshotState());
        Assert.Equal(2, b.ActiveVersion);
        Assert.Equal(a.Apply(publish, 11), b.Apply(publish, 11));
    }
}
