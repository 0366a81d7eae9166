using System.Security.Cryptography;
using Google.Protobuf;
using SieveQ.Controller.Access;
using SieveQ.Protocol.V1;
using SieveQ.Sieve.Envelope;
using SieveQ.Transport;

namespace SieveQ.Controller.Tests;

/// <summary>EnrolSender, RevokeSender, EnrolReceiver and RevokeReceiver against a real controller on loopback: role, validation and audit.</summary>
public sealed class EnrolmentCallTests
{
    /// <summary>A request as `sieveq enrol request` makes it: fresh P-256 keys and the proof of possession.</summary>
    internal static EnrolSenderRequest ValidRequest(string name = "sender-77", uint sender = 0, string reason = "new branch office")
    {
        using var signing = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        using var agreement = ECDiffieHellman.Create(ECCurve.NamedCurves.nistP256);
        var signingSpki = signing.ExportSubjectPublicKeyInfo();
        var agreementSpki = agreement.ExportSubjectPublicKeyInfo();
        return new EnrolSenderRequest
        {
            Sender = sender,
            Name = name,
            SignaturePublicKey = ByteString.CopyFrom(signingSpki),
            AgreementPublicKey = ByteString.CopyFrom(agreementSpki),
            Proof = ByteString.CopyFrom(EnrolmentProof.Sign(name, signingSpki, agreementSpki, signing)),
            Reason = reason,
        };
    }

    [Fact]
    public async Task An_operators_enrolment_is_audited_with_the_name_and_signing_key_and_not_claimed_applied_without_a_command_key()
    {
        await using var f = await ControllerFixture.StartAsync();
        using var op = f.Client(f.Operator);
        var request = ValidRequest(sender: 40);
        var reply = await op.EnrolSenderAsync(request);
        Assert.False(reply.Applied);
        Assert.Equal(ManagementApi.NoCommandKey, reply.Status);
        var record = f.Host.Audit.Tail(1).Single();
        Assert.Equal(reply.AuditSequence, record.Sequence);
        Assert.Equal("enrol-sender", record.Action);
        Assert.Equal($"key {op.KeyId} (olga, operator) from 127.0.0.1", record.Actor);
        var keyId = ManagementSignature.KeyIdOf(request.SignaturePublicKey.ToByteArray());
        Assert.Equal($"sender 40 'sender-77', signing key {keyId} (reason: new branch office)", record.Target);

        var next = await op.EnrolSenderAsync(ValidRequest(name: "branch.b", reason: ""));
        Assert.StartsWith("sender (next free id) 'branch.b', signing key ", f.Host.Audit.Tail(1).Single().Target, StringComparison.Ordinal);
        Assert.False(next.Applied);
    }

    public static TheoryData<string, string> Malformed => new()
    {
        { "id", "is not a sender id" },
        { "name", "a name holds letters" },
        { "empty-name", "a name is 1 to 64 bytes" },
        { "not-spki", "the signature public key is not a P-256 SubjectPublicKeyInfo" },
        { "p384-agreement", "the agreement public key is not one P-256 SubjectPublicKeyInfo" },
        { "long-key", "each public key is a SubjectPublicKeyInfo of 1 to 128 bytes" },
        { "other-proof", "the proof of possession is not signed by the private half" },
        { "short-proof", "the proof of possession is not a 64-byte signature" },
        { "reason", $"the reason is at most {ManagementApi.MaxReasonLength} characters" },
    };

    [Theory]
    [MemberData(nameof(Malformed))]
    public async Task A_malformed_enrolment_is_refused_before_anything_is_ordered(string what, string expected)
    {
        await using var f = await ControllerFixture.StartAsync();
        using var op = f.Client(f.Operator);
        var request = ValidRequest();
        using var p384 = ECDiffieHellman.Create(ECCurve.NamedCurves.nistP384);
        switch (what)
        {
            case "id": request.Sender = (uint)int.MaxValue + 1; break;
            case "name": request.Name = "sender 77; drop"; break;
            case "empty-name": request.Name = ""; break;
            case "not-spki": request.SignaturePublicKey = ByteString.CopyFrom(RandomNumberGenerator.GetBytes(91)); break;
            case "p384-agreement": request.AgreementPublicKey = ByteString.CopyFrom(p384.ExportSubjectPublicKeyInfo()); break;
            case "long-key": request.AgreementPublicKey = ByteString.CopyFrom(new byte[129]); break;
            case "other-proof": request.Proof = ValidRequest().Proof; break;
            case "short-proof": request.Proof = ByteString.CopyFrom(new byte[63]); break;
            case "reason": request.Reason = new string('x', ManagementApi.MaxReasonLength + 1); break;
        }
        var before = f.Host.Audit.LastSequence;
        var e = await Assert.ThrowsAsync<GrpcCallException>(() => op.EnrolSenderAsync(request));
        Assert.Equal(GrpcStatusCode.InvalidArgument, e.Status);
        Assert.Contains(expected, e.Message, StringComparison.Ordinal);
        if (what != "reason")
        {
            // A refused enrolment by a known caller is on the record, with the requester's name only when it is a valid name.
            var record = f.Host.Audit.Tail(1).Single();
            Assert.Equal(before + 1, record.Sequence);
            Assert.Equal("enrol-sender", record.Action);
            Assert.StartsWith("refused: ", record.Outcome, StringComparison.Ordinal);
            Assert.DoesNotContain("drop", record.Target, StringComparison.Ordinal);
        }
    }

    [Fact]
    public async Task A_viewer_is_refused_enrolment_and_revocation_and_both_refusals_are_audited()
    {
        await using var f = await ControllerFixture.StartAsync();
        using var viewer = f.Client(f.Viewer);
        Assert.Equal(GrpcStatusCode.PermissionDenied, (await Assert.ThrowsAsync<GrpcCallException>(() => viewer.EnrolSenderAsync(ValidRequest()))).Status);
        Assert.Equal(GrpcStatusCode.PermissionDenied, (await Assert.ThrowsAsync<GrpcCallException>(() => viewer.RevokeSenderAsync(3, "curious"))).Status);
        var tail = f.Host.Audit.Tail(2);
        Assert.Equal(["enrol-sender", "revoke-sender"], tail.Select(r => r.Action));
        Assert.All(tail, r => Assert.StartsWith("refused: role viewer is below operator", r.Outcome, StringComparison.Ordinal));
        Assert.Equal("sender 3 (reason: curious)", tail[1].Target);
    }

    [Fact]
    public async Task An_operators_revocation_is_audited_and_sender_zero_is_refused()
    {
        await using var f = await ControllerFixture.StartAsync();
        using var op = f.Client(f.Operator);
        var reply = await op.RevokeSenderAsync(9, "key leaked");
        Assert.False(reply.Applied);
        var record = f.Host.Audit.Tail(1).Single();
        Assert.Equal(("revoke-sender", "sender 9 (reason: key leaked)", ManagementApi.NoCommandKey), (record.Action, record.Target, record.Outcome));
        var before = f.Host.Audit.LastSequence;
        Assert.Equal(GrpcStatusCode.InvalidArgument, (await Assert.ThrowsAsync<GrpcCallException>(() => op.RevokeSenderAsync(0, "x"))).Status);
        Assert.Equal(before, f.Host.Audit.LastSequence);
    }

    [Fact]
    public async Task A_receivers_enrolment_and_revocation_are_checked_and_audited_as_the_receivers()
    {
        await using var f = await ControllerFixture.StartAsync();
        using var op = f.Client(f.Operator);
        var asked = ValidRequest(name: "orders-in", reason: "new SIEM collector");
        var request = new EnrolReceiverRequest
        {
            Receiver = 130,
            Name = asked.Name,
            SignaturePublicKey = asked.SignaturePublicKey,
            AgreementPublicKey = asked.AgreementPublicKey,
            Proof = asked.Proof,
            Reason = asked.Reason,
        };
        var reply = await op.EnrolReceiverAsync(request);
        Assert.False(reply.Applied);
        var record = f.Host.Audit.Tail(1).Single();
        var keyId = ManagementSignature.KeyIdOf(request.SignaturePublicKey.ToByteArray());
        Assert.Equal(("enrol-receiver", $"receiver 130 'orders-in', signing key {keyId} (reason: new SIEM collector)", ManagementApi.NoCommandKey),
            (record.Action, record.Target, record.Outcome));

        // Checked like a sender's before anything is ordered: a proof by another key is refused, and on the record.
        request.Proof = ValidRequest().Proof;
        var e = await Assert.ThrowsAsync<GrpcCallException>(() => op.EnrolReceiverAsync(request));
        Assert.Equal(GrpcStatusCode.InvalidArgument, e.Status);
        Assert.Contains("the proof of possession is not signed by the private half", e.Message, StringComparison.Ordinal);
        Assert.Equal(("enrol-receiver", true), (f.Host.Audit.Tail(1).Single().Action, f.Host.Audit.Tail(1).Single().Outcome.StartsWith("refused: ", StringComparison.Ordinal)));

        Assert.False((await op.RevokeReceiverAsync(101, "decommissioned")).Applied);
        Assert.Equal(("revoke-receiver", "receiver 101 (reason: decommissioned)"), (f.Host.Audit.Tail(1).Single().Action, f.Host.Audit.Tail(1).Single().Target));
        var before = f.Host.Audit.LastSequence;
        Assert.Equal(GrpcStatusCode.InvalidArgument, (await Assert.ThrowsAsync<GrpcCallException>(() => op.RevokeReceiverAsync(0, "x"))).Status);
        Assert.Equal(before, f.Host.Audit.LastSequence);

        using var viewer = f.Client(f.Viewer);
        Assert.Equal(GrpcStatusCode.PermissionDenied, (await Assert.ThrowsAsync<GrpcCallException>(() => viewer.RevokeReceiverAsync(101, "curious"))).Status);
    }
}
