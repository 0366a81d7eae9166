using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// Sender enrolment and revocation through the ordering (administrator command ops 5 and 6): a new sender's messages
/// are taken once the enrolment is applied, on every replica alike, and refused after its revocation; a forged
/// administrator signature, a bad proof of possession, a reused id and a replayed nonce are each refused with their
/// reason and leave the agreed state as it was; the table survives a snapshot, and pre-SQs read it page by page.
/// </summary>
public sealed class EnrolmentCommandTests : IClassFixture<TestWorld>, IDisposable
{
    private const int Carrier = 11;
    private const int NewSender = 7;
    private readonly TestWorld _w;
    private readonly ECDsa _admin = ECDsa.Create(ECCurve.NamedCurves.nistP256);
    private readonly ECDsa _intruder = ECDsa.Create(ECCurve.NamedCurves.nistP256);
    private readonly ECDsa _newSigning = ECDsa.Create(ECCurve.NamedCurves.nistP256);
    private readonly ECDiffieHellman _newAgreement = ECDiffieHellman.Create(ECCurve.NamedCurves.nistP256);
    private readonly List<IDisposable> _owned = [];
    private long _requestSeq;
    private long _cid;
    private long _time;

    public EnrolmentCommandTests(TestWorld w) => _w = w;

    public void Dispose()
    {
        _admin.Dispose();
        _intruder.Dispose();
        _newSigning.Dispose();
        _newAgreement.Dispose();
        foreach (var d in _owned)
        {
            d.Dispose();
        }
    }

    /// <summary>Each replica has its own key directory, as each replica process does: enrolment changes it.</summary>
    private SieveReplicaApplication NewReplica(ReplicaSieveOptions? options = null)
    {
        var key = new AdministratorKey(_admin.ExportSubjectPublicKeyInfo());
        var directory = new PublicKeyDirectory(_w.Enrolment);
        _owned.Add(key);
        _owned.Add(directory);
        var routes = new RoutePolicy(TestWorld.SenderIds.Append(NewSender).Append(8).SelectMany(s => TestWorld.ReceiverIds.Select(r => new Route(s, r, 1 << 20))));
        return new SieveReplicaApplication(directory, options ?? new ReplicaSieveOptions(), routes) { Administrator = key };
    }

    private List<SieveReplicaApplication> Replicas(ReplicaSieveOptions? options = null) =>
        Enumerable.Range(0, TestWorld.N).Select(_ => NewReplica(options)).ToList();

    private PartyEnrolmentClaim Claim(string name = "sender-7", ECDsa? prover = null)
    {
        var signing = _newSigning.ExportSubjectPublicKeyInfo();
        var agreement = _newAgreement.ExportSubjectPublicKeyInfo();
        return new PartyEnrolmentClaim(name, signing, agreement, EnrolmentProof.Sign(name, signing, agreement, prover ?? _newSigning));
    }

    private byte[] Enrol(int id, long nonce, PartyEnrolmentClaim? claim = null, ECDsa? admin = null) =>
        AdminCommandCodec.SignEnrolment(id, nonce, claim ?? Claim(), admin ?? _admin);

    private byte[] NewSenderMessage(long seq, string text) =>
        SenderMessageCodec.SignSingle(SenderMessageCodec.EncodeSignedRegion(NewSender, seq, 100, System.Text.Encoding.UTF8.GetBytes(text)), _newSigning);

    private List<byte[]> Decide(IReadOnlyList<SieveReplicaApplication> replicas, int origin, params byte[][] items) => Decide(replicas, origin, false, items);

    /// <param name="sameTime">At the agreed time of the previous decision, so that a snapshot shows only what the request changed.</param>
    private List<byte[]> Decide(IReadOnlyList<SieveReplicaApplication> replicas, int origin, bool sameTime, params byte[][] items)
    {
        var request = TestWorld.Request(origin, ++_requestSeq, items);
        if (!sameTime)
        {
            _time = 1_000 + (_cid * 10);
        }
        var at = TestWorld.At(++_cid, _time);
        return replicas.Select(r => r.Execute(at, [request]).Replies[0]).ToList();
    }

    [Fact]
    public void An_enrolled_sender_is_taken_on_every_replica_without_restart_and_refused_after_revocation()
    {
        var replicas = Replicas();
        // Not enrolled yet: the replicas refuse it at the whitelist.
        Assert.Equal(new ExecuteResult(0, 0, 1), TestWorld.AgreedExecuteResult(Decide(replicas, 10, NewSenderMessage(1, "too early"))));

        var enrolled = TestWorld.AgreedAdminResult(Decide(replicas, Carrier, Enrol(NewSender, 5)));
        Assert.True(enrolled.Applied, enrolled.Reason);
        Assert.Equal("enrol sender 7 ('sender-7'): applied (enrolment version 1)", enrolled.Reason);
        Assert.All(replicas, r => Assert.True(r.IsSenderEnrolled(NewSender)));

        Assert.Equal(new ExecuteResult(1, 0, 0), TestWorld.AgreedExecuteResult(Decide(replicas, 10, NewSenderMessage(1, "hello"))));
        // Held ahead of a gap, then released by the revocation.
        Assert.Equal(new ExecuteResult(0, 1, 0), TestWorld.AgreedExecuteResult(Decide(replicas, 10, NewSenderMessage(3, "ahead"))));
        Assert.All(replicas, r => Assert.Equal(1, r.HeldCount));

        var revoked = TestWorld.AgreedAdminResult(Decide(replicas, Carrier, AdminCommandCodec.Sign(AdminOp.RevokeSender, NewSender, 6, _admin)));
        Assert.True(revoked.Applied, revoked.Reason);
        Assert.Equal("revoke sender 7: applied (enrolment version 2; 1 held messages released)", revoked.Reason);
        Assert.All(replicas, r =>
        {
            Assert.False(r.IsSenderEnrolled(NewSender));
            Assert.Equal(0, r.HeldCount);
            Assert.Equal(0, r.QueueBytes(100) - r.ReadModel.QueueBytes(100));
        });
        var before = replicas[0].Drops[SieveStage.Whitelist, DropReason.NotWhitelisted];
        Assert.Equal(new ExecuteResult(0, 0, 1), TestWorld.AgreedExecuteResult(Decide(replicas, 10, NewSenderMessage(2, "after"))));
        Assert.Equal(before + 1, replicas[0].Drops[SieveStage.Whitelist, DropReason.NotWhitelisted]);

        // A revoked id is burned: enrolling it again is refused.
        var again = TestWorld.AgreedAdminResult(Decide(replicas, Carrier, Enrol(NewSender, 7)));
        Assert.False(again.Applied);
        Assert.Contains("id 7 is taken (revoked, and ids are never reused)", again.Reason, StringComparison.Ordinal);
        var snapshots = replicas.Select(r => r.TakeSnapshot()).ToList();
        Assert.All(snapshots, s => Assert.Equal(snapshots[0], s));
    }

    [Fact]
    public void A_static_sender_can_be_revoked()
    {
        var replicas = Replicas();
        Decide(replicas, 10, AckRequestCodec.Encode(2, 0, 1, 1, _w.SenderSigning[2]));
        Assert.All(replicas, r => Assert.Equal(10, r.ReadModel.Assignments[2].PreSq));
        Assert.True(TestWorld.AgreedAdminResult(Decide(replicas, Carrier, AdminCommandCodec.Sign(AdminOp.RevokeSender, 2, 1, _admin))).Applied);
        Assert.Equal(new ExecuteResult(0, 0, 1), TestWorld.AgreedExecuteResult(Decide(replicas, 10, _w.Message(2, 1, 100, "revoked"))));
        Assert.All(replicas, r => Assert.False(r.IsSenderEnrolled(2)));
        // Its record is gone, and with it its assignment.
        Assert.All(replicas, r => Assert.False(r.ReadModel.Assignments.ContainsKey(2)));
    }

    [Fact]
    public void Next_free_id_is_above_every_sender_and_receiver_id()
    {
        var replicas = Replicas();
        var r = TestWorld.AgreedAdminResult(Decide(replicas, Carrier, Enrol(AdminCommand.NextFreeId, 1)));
        Assert.True(r.Applied, r.Reason);
        // Receivers 100 and 101 are the highest ids of the test enrolment.
        Assert.StartsWith("enrol sender 102 ", r.Reason, StringComparison.Ordinal);
        Assert.All(replicas, x => Assert.True(x.IsSenderEnrolled(102)));
    }

    public static TheoryData<string> Refusals => ["forged admin signature", "bad proof of possession", "reused id", "replayed nonce", "static id", "table full"];

    [Theory]
    [MemberData(nameof(Refusals))]
    public void A_refused_enrolment_says_why_and_leaves_the_agreed_state_unchanged(string refusal)
    {
        var replicas = Replicas(new ReplicaSieveOptions { MaxEnrolmentChanges = 1 });
        Assert.True(TestWorld.AgreedAdminResult(Decide(replicas, Carrier, Enrol(8, 10, Claim("first")))).Applied);
        var before = replicas.Select(r => r.TakeSnapshot()).ToList();
        using var otherKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var (command, reason) = refusal switch
        {
            "forged admin signature" => (Enrol(NewSender, 11, admin: _intruder), "refused: not signed by the deployment's administrator key"),
            "bad proof of possession" => (Enrol(NewSender, 11, Claim(prover: otherKey)),
                "refused: enrol sender 'sender-7': the proof of possession is not signed by the private half of the signature public key"),
            "reused id" => (Enrol(8, 11), "refused: enrol sender 8 ('sender-7'): id 8 is taken (enrolled as sender 8)"),
            "replayed nonce" => (Enrol(NewSender, 10), "refused: nonce 10 is not above the last applied administrator command's (10): a replay or an overtaken command"),
            "static id" => (Enrol(1, 11), "refused: enrol sender 1 ('sender-7'): id 1 is taken (sender 1 of the enrolment file)"),
            _ => (Enrol(NewSender, 11), "refused: enrol sender 7: the enrolment-change table is full (1 entries, maxEnrolmentChanges)"),
        };
        var result = TestWorld.AgreedAdminResult(Decide(replicas, Carrier, sameTime: true, command));
        Assert.False(result.Applied);
        Assert.Equal(reason, result.Reason);
        Assert.Equal(10, result.LastNonce);
        Assert.All(replicas, r => Assert.False(r.IsSenderEnrolled(NewSender)));
        Assert.Equal(before, replicas.Select(r => r.TakeSnapshot()).ToList());
    }

    [Fact]
    public void A_quarantine_signature_cannot_pass_for_a_revocation()
    {
        // Same bytes but the op: the signature was made under the other purpose's domain.
        var quarantine = AdminCommandCodec.Sign(AdminOp.QuarantineSender, 2, 1, _admin);
        quarantine[1] = (byte)AdminOp.RevokeSender;
        var replicas = Replicas();
        var result = TestWorld.AgreedAdminResult(Decide(replicas, Carrier, quarantine));
        Assert.False(result.Applied);
        Assert.All(replicas, r => Assert.True(r.IsSenderEnrolled(2)));
    }

    [Fact]
    public void The_table_survives_a_snapshot_and_restores_the_key_directory()
    {
        var source = NewReplica();
        Assert.True(TestWorld.AgreedAdminResult(Decide([source], Carrier, Enrol(NewSender, 1))).Applied);
        Assert.True(TestWorld.AgreedAdminResult(Decide([source], Carrier, AdminCommandCodec.Sign(AdminOp.RevokeSender, 3, 2, _admin))).Applied);
        var snapshot = source.TakeSnapshot();

        var restored = NewReplica();
        restored.RestoreSnapshot(snapshot);
        Assert.True(restored.IsSenderEnrolled(NewSender));
        Assert.False(restored.IsSenderEnrolled(3));
        Assert.Equal(2, restored.EnrolmentVersion);
        Assert.Equal(snapshot, restored.TakeSnapshot());
        Assert.Equal(new ExecuteResult(1, 0, 0), TestWorld.AgreedExecuteResult(Decide([restored], 10, NewSenderMessage(1, "after state transfer"))));
    }

    [Fact]
    public void The_enrolment_query_answers_pages_from_the_agreed_table()
    {
        var replicas = Replicas();
        var unchanged = EnrolmentViewCodec.DecodeView(Decide(replicas, 10, EnrolmentViewCodec.EncodeQuery(0, 0))[0]);
        Assert.Equal(0, unchanged.Version);
        Assert.Empty(unchanged.Entries);
        for (var i = 0; i < EnrolmentViewCodec.MaxEntries + 2; i++)
        {
            Assert.True(TestWorld.AgreedAdminResult(Decide(replicas, Carrier, Enrol(200 + i, 1 + i, Claim($"s{i}")))).Applied);
        }
        var replies = Decide(replicas, 10, EnrolmentViewCodec.EncodeQuery(0, 0));
        Assert.All(replies, r => Assert.Equal(replies[0], r));
        var first = EnrolmentViewCodec.DecodeView(replies[0]);
        Assert.False(first.Complete);
        Assert.Equal(EnrolmentViewCodec.MaxEntries, first.Entries.Count);
        var second = EnrolmentViewCodec.DecodeView(Decide(replicas, 10, EnrolmentViewCodec.EncodeQuery(0, first.Entries[^1].Key + 1))[0]);
        Assert.True(second.Complete);
        Assert.Equal([216, 217], second.Entries.Select(e => e.Key));
        Assert.Equal("s17", second.Entries[1].Value!.Name);
        var current = EnrolmentViewCodec.DecodeView(Decide(replicas, 10, EnrolmentViewCodec.EncodeQuery(first.Version, 0))[0]);
        Assert.Empty(current.Entries);
    }

    [Fact]
    public void The_codec_round_trips_an_enrolment_and_refuses_a_truncated_one()
    {
        var bytes = Enrol(NewSender, 3);
        var decoded = AdminCommandCodec.Decode(bytes);
        Assert.Equal(AdminOp.EnrolSender, decoded.Op);
        Assert.Equal("sender-7", decoded.Claim!.Name);
        Assert.Null(EnrolmentProof.Problem(decoded.Claim));
        Assert.True(bytes.Length <= AdminCommandCodec.MaxLength);
        // The figures docs/sieve-protocol.md gives.
        Assert.Equal(78, AdminCommandCodec.Length);
        Assert.Equal(474, AdminCommandCodec.MaxLength);
        Assert.Equal(337, EnrolmentChangeTable.MaxEntryBytes);
        Assert.Throws<MalformedEnvelopeException>(() => AdminCommandCodec.Decode(bytes.AsMemory(0, bytes.Length - 1)));
    }
}
