using System.Text;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Replica;
using SieveQ.Rules.Activation;
using SieveQ.Rules.Signing;

namespace SieveQ.Rules.Tests;

/// <summary>Activation at a sequence number, rollback, monotonic versions, state carried across a switch.</summary>
public sealed class RuleSetStoreTests
{
    private static string Version(int v, string rules) => T.Doc($$"""
        "senders": [{ "id": 1 }, { "id": 2 }],
        "patternSets": [{ "name": "bad", "literals": ["attack"] }],
        "rates": [{ "name": "r", "window": "1h", "messages": 1000 }],
        "quarantine": { "threshold": 50, "decayPerSecond": 1, "increments": { "default": 50 } },
        "rules": [{{rules}}]
        """, v);

    private static readonly string V1 = Version(1, """{ "name": "v1-all", "action": "allow", "from": "any", "to": "any", "rejectPatterns": ["bad"], "rates": ["r"] }""");
    private static readonly string V2 = Version(2, """{ "name": "v2-only-1", "action": "allow", "from": { "senders": [1] }, "to": "any", "rejectPatterns": ["bad"], "rates": ["r"] }""");

    [Fact]
    public void A_switch_takes_effect_at_the_same_sequence_number_on_every_replica()
    {
        var stores = Enumerable.Range(0, 4).Select(_ => new RuleSetStore(T.Compile(V1))).ToArray();
        var rng = new Random(1);
        var rulesSeen = new List<(long Seq, string Rule)>();
        for (long seq = 0; seq < 200; seq++)
        {
            foreach (var s in stores)
            {
                s.AdvanceTo(seq);
            }
            if (seq == 40)
            {
                // The ordered command: each replica compiles the same document and schedules it for sequence 100.
                Assert.All(stores, s => Assert.Equal(ScheduleResult.Scheduled, s.ScheduleActivation(T.Compile(V2), 100)));
            }
            for (var k = 0; k < 3; k++)
            {
                var input = new RuleInput(seq * 1000, rng.Next(1, 3), seq * 3 + k, 9, Encoding.UTF8.GetBytes(rng.Next(10) == 0 ? "attack" : "ok"));
                var verdicts = stores.Select(s => s.Decide(input)).ToArray();
                Assert.All(verdicts, v => Assert.Equal(verdicts[0], v));
                rulesSeen.Add((seq, verdicts[0].Rule));
            }
        }
        Assert.All(stores, s => Assert.Equal(2, s.Current.Version));
        Assert.All(rulesSeen.Where(r => r.Rule.StartsWith("v1", StringComparison.Ordinal)), r => Assert.True(r.Seq < 100));
        Assert.All(rulesSeen.Where(r => r.Rule.StartsWith("v2", StringComparison.Ordinal)), r => Assert.True(r.Seq >= 100));
        Assert.Contains(rulesSeen, r => r.Rule == "v1-all");
        Assert.Contains(rulesSeen, r => r.Rule == "v2-only-1");
        var snapshots = stores.Select(s => s.SnapshotState()).ToArray();
        Assert.All(snapshots, x => Assert.Equal(snapshots[0], x));
    }

    [Fact]
    public void Versions_only_go_up_and_rollback_returns_to_the_previous_one()
    {
        var store = new RuleSetStore(T.Compile(V2));
        store.AdvanceTo(10);
        Assert.Equal(ScheduleResult.VersionNotNewer, store.ScheduleActivation(T.Compile(V1), 20));
        Assert.Equal(ScheduleResult.VersionNotNewer, store.ScheduleActivation(T.Compile(V2), 20));
        Assert.Equal(ScheduleResult.NothingToRollBackTo, store.ScheduleRollback(20));
        var v3 = T.Compile(Version(3, """{ "name": "v3", "action": "allow", "from": "any", "to": "any" }"""));
        Assert.Equal(ScheduleResult.SequenceAlreadyPassed, store.ScheduleActivation(v3, 10));
        Assert.Equal(ScheduleResult.Scheduled, store.ScheduleActivation(v3, 11));
        Assert.Equal(ScheduleResult.SwitchAlreadyPending, store.ScheduleRollback(12));
        Assert.True(store.AdvanceTo(11));
        Assert.Equal(3, store.Current.Version);
        Assert.Equal(2, store.Previous!.Version);

        Assert.Equal(ScheduleResult.Scheduled, store.ScheduleRollback(15));
        Assert.False(store.AdvanceTo(14));
        Assert.True(store.AdvanceTo(15));
        Assert.Equal(2, store.Current.Version);
        Assert.Equal(3, store.HighestVersion);
        // A replayed v3 document (validly signed once) cannot come back as a new activation...
        Assert.Equal(ScheduleResult.VersionNotNewer, store.ScheduleActivation(v3, 20));
        // ...only an explicit second rollback undoes the first.
        Assert.Equal(ScheduleResult.Scheduled, store.ScheduleRollback(20));
        store.AdvanceTo(20);
        Assert.Equal(3, store.Current.Version);
        Assert.Throws<ArgumentOutOfRangeException>(() => store.AdvanceTo(19));
    }

    [Fact]
    public void A_quarantine_survives_a_rule_set_update()
    {
        var store = new RuleSetStore(T.Compile(V1));
        store.AdvanceTo(0);
        T.Denied(store.Decide(T.In(0, 1, 9, "attack")), "v1-all", "quarantined");
        store.ScheduleActivation(T.Compile(V2), 1);
        store.AdvanceTo(1);
        T.Denied(store.Decide(T.In(1000, 1, 9, "ok")), "quarantine");
        T.Allowed(store.Decide(T.In(60_000, 1, 9, "ok")), "v2-only-1");
    }

    [Fact]
    public void State_the_new_version_cannot_interpret_is_dropped_and_the_rest_kept()
    {
        var store = new RuleSetStore(T.Compile(V1));
        store.Decide(T.In(0, 1, 9, "ok"));
        store.Decide(T.In(0, 2, 9, "attack"));
        var noQuarantine = T.Compile(T.Doc("""
            "rates": [{ "name": "r", "window": "1h", "messages": 1 }],
            "rules": [{ "name": "v9", "action": "allow", "from": "any", "to": "any", "rates": ["r"] }]
            """, 9));
        store.ScheduleActivation(noQuarantine, 0);
        store.AdvanceTo(0);
        // The rate window came along (1 of 1 used), the suspicion had nowhere to go.
        T.Denied(store.Decide(T.In(1, 1, 9, "ok")), "v9", "rate r");
        T.Allowed(store.Decide(T.In(1, 2, 9, "ok")), "v9");
    }

    [Fact]
    public void The_store_snapshot_carries_the_rule_sets_and_restores_into_a_fresh_replica()
    {
        var store = new RuleSetStore(T.Compile(V1));
        var stream = Enumerable.Range(0, 300).Select(i => T.In(i * 10, 1 + (i % 2), 9, i % 17 == 0 ? "attack" : "ok", i)).ToList();
        for (var i = 0; i < 150; i++)
        {
            store.AdvanceTo(i);
            store.Decide(stream[i]);
        }
        store.ScheduleActivation(T.Compile(V2), 200);
        var snapshot = store.SnapshotState();

        // A replica that only knows some unrelated rule set catches up by state transfer.
        var fresh = new RuleSetStore(T.Compile(T.Doc("\"rules\": []", 1)));
        fresh.RestoreState(snapshot);
        Assert.Equal(snapshot, fresh.SnapshotState());
        Assert.Equal(2, fresh.Pending!.Target!.Version);
        for (var i = 150; i < 300; i++)
        {
            store.AdvanceTo(i);
            fresh.AdvanceTo(i);
            Assert.Equal(store.Decide(stream[i]), fresh.Decide(stream[i]));
        }
        Assert.Equal(store.SnapshotState(), fresh.SnapshotState());
        Assert.Throws<MalformedEnvelopeException>(() => fresh.RestoreState(snapshot.AsSpan(0, 100)));
        Assert.Equal(2, fresh.Current.Version);
    }

    [Fact]
    public void Refused_rule_sets_leave_the_running_version_in_force()
    {
        using var admin = T.NewKey();
        var pinned = SignerKey.Of(admin);
        var store = new RuleSetStore(T.Compile(V1));
        var v2 = Encoding.UTF8.GetBytes(V2);
        var good = RuleSetSigner.Sign(Document.RuleSetParser.Parse(v2).CanonicalBytes, admin).ToJson();
        using var other = T.NewKey();
        var attempts = new (byte[] Json, byte[] Sig)[]
        {
            (Encoding.UTF8.GetBytes("{ not json"), good),                                         // malformed
            (v2, "{}"u8.ToArray()),                                                               // unsigned
            (v2, RuleSetSigner.Sign(Document.RuleSetParser.Parse(v2).CanonicalBytes, other).ToJson()), // wrongly signed
            (Encoding.UTF8.GetBytes(V2.Replace("\"senders\": [1]", "\"senders\": [2]", StringComparison.Ordinal)), good), // tampered
            (new byte[Document.RuleSetParser.MaxDocumentBytes + 1], good),                       // oversized
        };
        foreach (var (json, sig) in attempts)
        {
            var e = Assert.Throws<RuleSetException>(() => store.ScheduleActivation(RuleSetLoader.Load(json, sig, pinned).Compiled, 5));
            Assert.False(string.IsNullOrWhiteSpace(e.Message));
            Assert.Equal(1, store.Current.Version);
            Assert.Null(store.Pending);
        }
        Assert.Equal(ScheduleResult.Scheduled, store.ScheduleActivation(RuleSetLoader.Load(v2, good, pinned).Compiled, 5));
    }
}
