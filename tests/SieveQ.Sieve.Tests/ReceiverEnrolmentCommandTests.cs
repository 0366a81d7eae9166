using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// Receiver enrolment and revocation through the ordering (administrator command ops 9 and 10), on four replica state
/// machines that must agree byte for byte: a receiver enrolled without restart can be given a route, gets messages
/// queued, and its signed acknowledgements free its queue; revoked, its queue is let go, messages to it are rejected
/// with the reason, and its id is burned in every role. The table keeps the role through a snapshot and in the pages
/// pre-SQs read.
/// </summary>
public sealed class ReceiverEnrolmentCommandTests(TestWorld w) : AdministeredReplicas(w), IClassFixture<TestWorld>
{
    private const int NewReceiver = 130;
    private readonly ECDsa _newSigning = ECDsa.Create(ECCurve.NamedCurves.nistP256);
    private readonly ECDiffieHellman _newAgreement = ECDiffieHellman.Create(ECCurve.NamedCurves.nistP256);
    private long _nonce;

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _newSigning.Dispose();
            _newAgreement.Dispose();
        }
        base.Dispose(disposing);
    }

    private SieveReplicaApplication NewReplica() => ReplicaWith(TestWorld.AllRoutes());

    private List<SieveReplicaApplication> Replicas() => ReplicasWith(() => TestWorld.AllRoutes());

    private PartyEnrolmentClaim Claim(string name = "receiver-130")
    {
        var signing = _newSigning.ExportSubjectPublicKeyInfo();
        var agreement = _newAgreement.ExportSubjectPublicKeyInfo();
        return new PartyEnrolmentClaim(name, signing, agreement, EnrolmentProof.Sign(name, signing, agreement, _newSigning));
    }

    private byte[] EnrolReceiver(int id) => AdminCommandCodec.SignEnrolment(AdminOp.EnrolReceiver, id, ++_nonce, Claim(), Admin);

    private byte[] Revoke(AdminOp op, int id) => AdminCommandCodec.Sign(op, id, ++_nonce, Admin);

    [Fact]
    public void An_enrolled_receiver_gets_a_route_and_messages_and_after_revocation_its_queue_goes_and_messages_to_it_are_rejected()
    {
        var replicas = Replicas();
        // Unknown yet: a route to it is refused, and a message to it is taken and rejected (so it is not sent again).
        var early = Order(replicas, AdminCommandCodec.SignRoute(AdminOp.AllowRoute, 1, NewReceiver, 100, ++_nonce, Admin));
        Assert.Equal("refused: allow route sender 1 -> receiver 130 (up to 100 bytes): receiver 130 is not enrolled", early.Reason);
        Assert.Equal(new ExecuteResult(0, 0, 1), TestWorld.AgreedExecuteResult(Decide(replicas, 10, W.Message(1, 1, NewReceiver, "too early"))));

        var enrolled = Order(replicas, EnrolReceiver(NewReceiver));
        Assert.True(enrolled.Applied, enrolled.Reason);
        Assert.Equal("enrol receiver 130 ('receiver-130'): applied (enrolment version 1)", enrolled.Reason);
        Assert.All(replicas, r => Assert.True(r.IsReceiverEnrolled(NewReceiver)));
        Assert.All(replicas, r => Assert.False(r.IsSenderEnrolled(NewReceiver)));
        Assert.True(Order(replicas, AdminCommandCodec.SignRoute(AdminOp.AllowRoute, 1, NewReceiver, 100, ++_nonce, Admin)).Applied);

        Assert.Equal(new ExecuteResult(1, 0, 0), TestWorld.AgreedExecuteResult(Decide(replicas, 10, W.Message(1, 2, NewReceiver, "first"))));
        Assert.Equal(new ExecuteResult(1, 0, 0), TestWorld.AgreedExecuteResult(Decide(replicas, 10, W.Message(1, 3, NewReceiver, "second"))));
        Assert.All(replicas, r => Assert.Equal(2, r.QueueLength(NewReceiver)));

        // Its acknowledgement verifies under the key enrolled through the ordering, and frees what it names.
        // (The receiver numbers each sender's messages to it from 1.)
        Decide(replicas, 10, ReceiverAckCodec.Encode(NewReceiver, [new DeliveredCursor(1, 1)], _newSigning));
        Assert.All(replicas, r => Assert.Equal(1, r.QueueLength(NewReceiver)));
        // One signed by another key changes nothing.
        Decide(replicas, 10, ReceiverAckCodec.Encode(NewReceiver, [new DeliveredCursor(1, 2)], W.ReceiverSigning[100]));
        Assert.All(replicas, r => Assert.Equal(1, r.QueueLength(NewReceiver)));

        var revoked = Order(replicas, Revoke(AdminOp.RevokeReceiver, NewReceiver));
        Assert.True(revoked.Applied, revoked.Reason);
        Assert.Equal("revoke receiver 130: applied (enrolment version 2; 1 queued messages let go)", revoked.Reason);
        Assert.All(replicas, r =>
        {
            Assert.False(r.IsReceiverEnrolled(NewReceiver));
            Assert.Equal(0, r.QueueLength(NewReceiver));
            Assert.False(r.ReadModel.Receivers.ContainsKey(NewReceiver));
        });
        var unknown = replicas[0].Drops[SieveStage.Rules, DropReason.UnknownReceiver];
        Assert.Equal(new ExecuteResult(0, 0, 1), TestWorld.AgreedExecuteResult(Decide(replicas, 10, W.Message(1, 4, NewReceiver, "after"))));
        Assert.Equal(unknown + 1, replicas[0].Drops[SieveStage.Rules, DropReason.UnknownReceiver]);

        // Burned in every role: neither a receiver nor a sender is ever enrolled under it again.
        Assert.Contains("id 130 is taken (revoked, and ids are never reused)", Order(replicas, EnrolReceiver(NewReceiver)).Reason, StringComparison.Ordinal);
        Assert.Contains("id 130 is taken (revoked, and ids are never reused)",
            Order(replicas, AdminCommandCodec.SignEnrolment(AdminOp.EnrolSender, NewReceiver, ++_nonce, Claim(), Admin)).Reason, StringComparison.Ordinal);
        var snapshots = replicas.Select(r => r.TakeSnapshot()).ToList();
        Assert.All(snapshots, s => Assert.Equal(snapshots[0], s));
    }

    [Fact]
    public void A_static_receiver_can_be_revoked_and_a_revocation_names_the_role()
    {
        var replicas = Replicas();
        Assert.Equal(new ExecuteResult(1, 0, 0), TestWorld.AgreedExecuteResult(Decide(replicas, 10, W.Message(1, 1, 101, "queued"))));

        // Receiver 101 is no sender: revoking "sender 101" is refused and changes nothing.
        var wrongRole = Order(replicas, Revoke(AdminOp.RevokeSender, 101));
        Assert.Equal("refused: revoke sender 101: not enrolled (never, or already revoked)", wrongRole.Reason);
        Assert.All(replicas, r => Assert.True(r.IsReceiverEnrolled(101)));

        Assert.True(Order(replicas, Revoke(AdminOp.RevokeReceiver, 101)).Applied);
        Assert.All(replicas, r => Assert.False(r.IsReceiverEnrolled(101)));
        Assert.All(replicas, r => Assert.True(r.IsReceiverEnrolled(100)));
        Assert.Equal("refused: revoke receiver 101: not enrolled (never, or already revoked)", Order(replicas, Revoke(AdminOp.RevokeReceiver, 101)).Reason);
    }

    [Fact]
    public void An_id_a_static_receiver_holds_is_not_enrolled_again_and_the_next_free_id_is_above_it()
    {
        var replicas = Replicas();
        Assert.Equal("refused: enrol receiver 100 ('receiver-130'): id 100 is taken (receiver 100 of the enrolment file)", Order(replicas, EnrolReceiver(100)).Reason);
        var next = Order(replicas, EnrolReceiver(AdminCommand.NextFreeId));
        Assert.Equal("enrol receiver 102 ('receiver-130'): applied (enrolment version 1)", next.Reason);
    }

    [Fact]
    public void The_role_survives_a_snapshot_and_travels_in_the_pages_pre_SQs_read()
    {
        var source = NewReplica();
        Assert.True(Order([source], EnrolReceiver(NewReceiver)).Applied);
        Assert.True(Order([source], Revoke(AdminOp.RevokeSender, 3)).Applied);
        var snapshot = source.TakeSnapshot();

        var restored = NewReplica();
        restored.RestoreSnapshot(snapshot);
        Assert.True(restored.IsReceiverEnrolled(NewReceiver));
        Assert.False(restored.IsSenderEnrolled(NewReceiver));
        Assert.False(restored.IsSenderEnrolled(3));
        Assert.Equal(snapshot, restored.TakeSnapshot());

        var view = EnrolmentViewCodec.DecodeView(Decide([restored], 10, EnrolmentViewCodec.EncodeQuery(0, 0))[0]);
        Assert.Equal([3, NewReceiver], view.Entries.Select(e => e.Key));
        Assert.Null(view.Entries[0].Value);
        Assert.True(view.Entries[1].Value!.Receiver);
        Assert.Equal("receiver-130", view.Entries[1].Value!.Name);

        // A pre-SQ's directory laid over with the page knows the receiver's key and not as a sender's.
        using var directory = new PublicKeyDirectory(W.Enrolment);
        directory.SetEnrolmentChanges(view.Entries);
        Assert.True(directory.IsReceiver(NewReceiver));
        Assert.False(directory.IsSender(NewReceiver));
        Assert.False(directory.IsSender(3));
        var ack = ReceiverAckCodec.Decode(ReceiverAckCodec.Encode(NewReceiver, [new DeliveredCursor(1, 1)], _newSigning));
        Assert.True(directory.VerifyReceiver(NewReceiver, TaggedHash.Concat(DomainTags.ReceiverAck, ack.SignedRegion.Span), ack.Signature.Span));
        Assert.Equal(PartyStandingState.Enrolled, directory.ReceiverStanding(NewReceiver).State);
        Assert.True(directory.ReceiverStanding(NewReceiver).ThroughOrdering);
    }

    [Fact]
    public void The_codec_round_trips_receiver_ops_and_refuses_an_unknown_table_state()
    {
        var enrol = AdminCommandCodec.Decode(EnrolReceiver(NewReceiver));
        Assert.Equal((AdminOp.EnrolReceiver, NewReceiver, "receiver-130"), (enrol.Op, enrol.Target, enrol.Claim!.Name));
        Assert.True(enrol.ChangesEnrolment && enrol.TargetsReceiver && !enrol.TargetsSender);
        var revoke = AdminCommandCodec.Decode(Revoke(AdminOp.RevokeReceiver, NewReceiver));
        Assert.Equal((AdminOp.RevokeReceiver, NewReceiver), (revoke.Op, revoke.Target));

        // A quarantine signature cannot pass for a receiver's revocation (another domain).
        var quarantine = AdminCommandCodec.Sign(AdminOp.QuarantineSender, 100, ++_nonce, Admin);
        quarantine[1] = (byte)AdminOp.RevokeReceiver;
        var replicas = Replicas();
        Assert.Equal("refused: not signed by the deployment's administrator key", Order(replicas, quarantine).Reason);
        Assert.All(replicas, r => Assert.True(r.IsReceiverEnrolled(100)));

        var table = new EnrolmentChangeTable { Version = 1 };
        table.Entries.Add(NewReceiver, new EnrolledParty(NewReceiver, true, "r", [1], [2]));
        using var w = new CanonicalWriter(64);
        table.WriteTo(w);
        var bytes = w.ToArray();
        var r = new CanonicalReader(bytes);
        Assert.True(EnrolmentChangeTable.ReadFrom(ref r, 4).Entries[NewReceiver]!.Receiver);
        bytes[8 + 4 + 4] = 3;
        var e = Assert.Throws<MalformedEnvelopeException>(() =>
        {
            var bad = new CanonicalReader(bytes);
            EnrolmentChangeTable.ReadFrom(ref bad, 4);
        });
        Assert.Contains("state 3 of id 130", e.Message, StringComparison.Ordinal);
    }
}
