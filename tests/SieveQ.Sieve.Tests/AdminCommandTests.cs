using System.Security.Cryptography;
using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// Administrator commands (kind 0x06) through the replica state machine: quarantine and readmission of a sender and
/// a pre-SQ applied identically on every replica, refused (and changing nothing) when replayed, forged, unsigned by the
/// pinned key or naming a party that is not enrolled, and kept across a snapshot.
/// </summary>
public sealed class AdminCommandTests : IClassFixture<TestWorld>, IDisposable
{
    private const int Carrier = 11;
    private readonly TestWorld _w;
    private readonly ECDsa _admin = ECDsa.Create(ECCurve.NamedCurves.nistP256);
    private readonly ECDsa _intruder = ECDsa.Create(ECCurve.NamedCurves.nistP256);
    private readonly List<AdministratorKey> _keys = [];
    private long _requestSeq;
    private long _cid;

    public AdminCommandTests(TestWorld w) => _w = w;

    public void Dispose()
    {
        _admin.Dispose();
        _intruder.Dispose();
        foreach (var k in _keys)
        {
            k.Dispose();
        }
    }

    private SieveReplicaApplication NewReplica(bool pinned = true)
    {
        AdministratorKey? key = null;
        if (pinned)
        {
            key = new AdministratorKey(_admin.ExportSubjectPublicKeyInfo());
            _keys.Add(key);
        }
        return new SieveReplicaApplication(_w.Keys, new ReplicaSieveOptions(), TestWorld.AllRoutes()) { Administrator = key };
    }

    private byte[] Command(AdminOp op, int target, long nonce, ECDsa? key = null) => AdminCommandCodec.Sign(op, target, nonce, key ?? _admin);

    /// <summary>One decision of one request; the same decision goes to every replica given.</summary>
    private List<byte[]> Decide(IReadOnlyList<SieveReplicaApplication> replicas, int origin, params byte[][] items)
    {
        var request = TestWorld.Request(origin, ++_requestSeq, items);
        var at = TestWorld.At(++_cid, 1_000 + _cid * 10);
        return replicas.Select(r => r.Execute(at, [request]).Replies[0]).ToList();
    }

    [Fact]
    public void A_quarantined_sender_is_refused_untaken_on_every_replica_and_its_message_is_taken_once_after_readmission()
    {
        var replicas = Enumerable.Range(0, TestWorld.N).Select(_ => NewReplica()).ToList();
        Assert.Equal(new ExecuteResult(1, 0, 0), TestWorld.AgreedExecuteResult(Decide(replicas, 10, _w.Message(1, 1, 100, "before"))));

        var quarantined = TestWorld.AgreedAdminResult(Decide(replicas, Carrier, Command(AdminOp.QuarantineSender, 1, 5)));
        Assert.True(quarantined.Applied, quarantined.Reason);
        Assert.Equal(5, quarantined.LastNonce);
        Assert.Equal("quarantine sender 1: applied", quarantined.Reason);

        var during = _w.Message(1, 2, 100, "during");
        var refused = TestWorld.AgreedExecuteResult(Decide(replicas, 10, during, _w.Message(2, 1, 100, "another sender")));
        Assert.Equal(1, refused.Accepted);
        Assert.Equal(1, refused.Dropped);
        Assert.Equal([new UntakenMessage(1, 2)], refused.Untaken);
        // The pre-SQ is told to hold the sender's frames back for the administrator's short hold (5 s by default).
        Assert.Equal([new SenderQuarantineHold(1, new ReplicaSieveOptions().AdminQuarantineHoldMs)], refused.Quarantined);
        Assert.All(replicas, r =>
        {
            Assert.Equal(1, r.Drops[SieveStage.ReplicaAdmission, DropReason.AdminQuarantined]);
            Assert.True(r.IsSenderQuarantined(1));
            Assert.True(r.IsSenderQuarantinedByAdministrator(1));
            Assert.True(r.ReadModel.IsSenderQuarantined(1));
            Assert.Equal([1], r.ReadModel.AdminQuarantinedSenders);
        });

        var readmitted = TestWorld.AgreedAdminResult(Decide(replicas, Carrier, Command(AdminOp.ReadmitSender, 1, 6)));
        Assert.True(readmitted.Applied, readmitted.Reason);
        // The retransmission of the refused message is taken now, once; a second copy is a replay.
        Assert.Equal(new ExecuteResult(1, 0, 0), TestWorld.AgreedExecuteResult(Decide(replicas, 10, during)));
        Assert.Equal(new ExecuteResult(0, 0, 1), TestWorld.AgreedExecuteResult(Decide(replicas, 11, during)));
        Assert.All(replicas, r => Assert.False(r.IsSenderQuarantined(1)));
        var snapshots = replicas.Select(r => r.TakeSnapshot()).ToList();
        Assert.All(snapshots, s => Assert.Equal(snapshots[0], s));
    }

    [Fact]
    public void Readmission_also_ends_a_quarantine_earned_by_suspicion()
    {
        var replica = NewReplica();
        // Grant overruns through a pre-SQ weigh 2 each: push sender 3 over the threshold of 100 with messages too far ahead.
        for (var i = 0; i < 60 && !replica.IsSenderQuarantined(3); i++)
        {
            Decide([replica], 10, _w.Message(3, 1_000_000 + i, 100, "far ahead"));
        }
        Assert.True(replica.IsSenderQuarantined(3));
        Assert.False(replica.IsSenderQuarantinedByAdministrator(3));
        Assert.True(TestWorld.AgreedAdminResult(Decide([replica], Carrier, Command(AdminOp.ReadmitSender, 3, 1))).Applied);
        Assert.False(replica.IsSenderQuarantined(3));
        Assert.Equal(0, replica.SenderSuspicion(3));
        Assert.Equal(new ExecuteResult(1, 0, 0), TestWorld.AgreedExecuteResult(Decide([replica], 10, _w.Message(3, 1, 101, "welcome back"))));
    }

    [Fact]
    public void A_quarantined_pre_sq_carries_nothing_and_its_readmission_restores_it()
    {
        var replicas = Enumerable.Range(0, TestWorld.N).Select(_ => NewReplica()).ToList();
        Assert.True(TestWorld.AgreedAdminResult(Decide(replicas, 10, Command(AdminOp.QuarantinePreSq, 10, 1))).Applied);
        var m = _w.Message(2, 1, 101, "through the quarantined pre-SQ");
        Assert.Equal(new ExecuteResult(0, 0, 1), TestWorld.AgreedExecuteResult(Decide(replicas, 10, m)));
        Assert.All(replicas, r => Assert.True(r.IsPreSqQuarantined(10)));
        Assert.Equal(new ExecuteResult(1, 0, 0), TestWorld.AgreedExecuteResult(Decide(replicas, 11, m)));

        // The quarantined pre-SQ may still carry an administrator command: it is the command's signature that counts.
        Assert.True(TestWorld.AgreedAdminResult(Decide(replicas, 10, Command(AdminOp.ReadmitPreSq, 10, 2))).Applied);
        Assert.Equal(new ExecuteResult(1, 0, 0), TestWorld.AgreedExecuteResult(Decide(replicas, 10, _w.Message(2, 2, 101, "readmitted"))));
    }

    [Fact]
    public void Replayed_forged_unknown_and_unpinned_commands_are_refused_and_change_nothing()
    {
        var replicas = Enumerable.Range(0, TestWorld.N).Select(_ => NewReplica()).ToList();
        var quarantine = Command(AdminOp.QuarantineSender, 2, 100);
        Assert.True(TestWorld.AgreedAdminResult(Decide(replicas, Carrier, quarantine)).Applied);

        var replay = TestWorld.AgreedAdminResult(Decide(replicas, 10, quarantine));
        Assert.False(replay.Applied);
        Assert.Contains("nonce 100 is not above", replay.Reason, StringComparison.Ordinal);
        var older = TestWorld.AgreedAdminResult(Decide(replicas, Carrier, Command(AdminOp.ReadmitSender, 2, 99)));
        Assert.False(older.Applied);
        Assert.Equal(100, older.LastNonce);

        var forged = TestWorld.AgreedAdminResult(Decide(replicas, Carrier, Command(AdminOp.ReadmitSender, 2, 101, _intruder)));
        Assert.Equal("refused: not signed by the deployment's administrator key", forged.Reason);
        var tampered = Command(AdminOp.QuarantineSender, 1, 102);
        tampered[2] ^= 1;
        Assert.False(TestWorld.AgreedAdminResult(Decide(replicas, Carrier, tampered)).Applied);

        var unknownSender = TestWorld.AgreedAdminResult(Decide(replicas, Carrier, Command(AdminOp.QuarantineSender, 77, 103)));
        Assert.Equal("refused: quarantine sender 77: not enrolled", unknownSender.Reason);
        var unknownPreSq = TestWorld.AgreedAdminResult(Decide(replicas, Carrier, Command(AdminOp.QuarantinePreSq, 1, 104)));
        Assert.Equal("refused: quarantine pre-SQ 1: not enrolled", unknownPreSq.Reason);

        var mixed = TestWorld.AgreedAdminResult(Decide(replicas, 10, Command(AdminOp.ReadmitSender, 2, 105), _w.Message(3, 1, 100, "riding along")));
        Assert.Contains("only item", mixed.Reason, StringComparison.Ordinal);

        Assert.All(replicas, r =>
        {
            Assert.True(r.IsSenderQuarantinedByAdministrator(2));
            Assert.False(r.IsSenderQuarantinedByAdministrator(1));
            Assert.Equal(1, r.AdminCommandsApplied);
            Assert.Equal(7, r.AdminCommandsRefused);
        });
        var unpinned = NewReplica(pinned: false);
        var none = TestWorld.AgreedAdminResult(Decide([unpinned], Carrier, Command(AdminOp.QuarantineSender, 1, 1)));
        Assert.False(none.Applied);
        Assert.Contains("pins no administrator key", none.Reason, StringComparison.Ordinal);
        Assert.False(unpinned.IsSenderQuarantined(1));
    }

    [Fact]
    public void The_administrative_state_survives_a_snapshot_round_trip()
    {
        var replica = NewReplica();
        Assert.True(TestWorld.AgreedAdminResult(Decide([replica], Carrier, Command(AdminOp.QuarantineSender, 1, 10))).Applied);
        Assert.True(TestWorld.AgreedAdminResult(Decide([replica], Carrier, Command(AdminOp.QuarantinePreSq, 10, 11))).Applied);
        var snapshot = replica.TakeSnapshot();

        var restored = NewReplica();
        restored.RestoreSnapshot(snapshot);
        Assert.Equal(snapshot, restored.TakeSnapshot());
        Assert.True(restored.IsSenderQuarantinedByAdministrator(1));
        Assert.True(restored.IsPreSqQuarantinedByAdministrator(10));
        Assert.True(restored.ReadModel.IsSenderQuarantined(1));
        Assert.Equal(11, restored.ReadModel.AdminLastNonce);
        // The nonce travelled too: the last command replayed at the restored replica is refused.
        Assert.False(TestWorld.AgreedAdminResult(Decide([restored], Carrier, Command(AdminOp.QuarantinePreSq, 10, 11))).Applied);

        // A snapshot from before administrator commands existed (no administrative section, nor the enrolment table,
        // loss claims, moves and id leases after it) reads as empty.
        var fresh = NewReplica();
        var legacy = fresh.TakeSnapshot();
        var empty = new AdministrativeLayout();
        restored.RestoreSnapshot(legacy.AsSpan(0, legacy.Length - empty.Length - empty.EnrolmentTableLength - empty.LossClaimsLength - empty.MovesLength - empty.LeasesLength));
        Assert.False(restored.IsSenderQuarantined(1));
        Assert.Equal(legacy, restored.TakeSnapshot());
        // One from before the enrolment table existed keeps its administrative section.
        restored.RestoreSnapshot(snapshot.AsSpan(0, snapshot.Length - empty.EnrolmentTableLength - empty.LossClaimsLength - empty.MovesLength - empty.LeasesLength));
        Assert.True(restored.IsPreSqQuarantinedByAdministrator(10));

        var truncated = snapshot.AsSpan(0, snapshot.Length - 1).ToArray();
        Assert.Throws<MalformedEnvelopeException>(() => restored.RestoreSnapshot(truncated));
    }

    [Fact]
    public void The_command_codec_refuses_malformed_bytes()
    {
        var good = Command(AdminOp.ReadmitPreSq, 11, 3);
        Assert.Equal(AdminCommandCodec.Length, good.Length);
        var decoded = AdminCommandCodec.Decode(good);
        Assert.Equal((AdminOp.ReadmitPreSq, 11, 3L), (decoded.Op, decoded.Target, decoded.Nonce));
        var badOp = (byte[])good.Clone();
        badOp[1] = 9;
        Assert.Throws<MalformedEnvelopeException>(() => AdminCommandCodec.Decode(badOp));
        Assert.Throws<MalformedEnvelopeException>(() => AdminCommandCodec.Decode(good.AsMemory(0, good.Length - 1)));
        Assert.Throws<MalformedEnvelopeException>(() => AdminCommandCodec.Decode((byte[])[.. good, 0]));
        Assert.Throws<ArgumentOutOfRangeException>(() => Command(AdminOp.QuarantineSender, 1, 0));
        // Domain separation: the same key's signature over the same bytes for another purpose does not verify.
        using var key = new AdministratorKey(_admin.ExportSubjectPublicKeyInfo());
        var otherDomain = _admin.SignData(TaggedHash.Concat(DomainTags.RuleSetCommand, decoded.SignedRegion.Span), HashAlgorithmName.SHA256,
            DSASignatureFormat.IeeeP1363FixedFieldConcatenation);
        Assert.False(key.Verify(AdminCommandCodec.SignedBytes(decoded), otherDomain));
        Assert.True(key.Verify(AdminCommandCodec.SignedBytes(decoded), decoded.Signature.Span));
    }

    /// <summary>The empty administrative section: u64 nonce and two empty u32-counted sets.</summary>
    private readonly record struct AdministrativeLayout()
    {
        public int Length => 8 + 4 + 4;

        /// <summary>An empty enrolment-change table: version and count.</summary>
        public int EnrolmentTableLength => 8 + 4;

        /// <summary>No sender's loss claim pending: a u32 zero count.</summary>
        public int LossClaimsLength => 4;

        /// <summary>No sender moved between pre-SQs: a u32 zero count.</summary>
        public int MovesLength => 4;

        /// <summary>No id lease: a u32 zero count.</summary>
        public int LeasesLength => 4;
    }
}
