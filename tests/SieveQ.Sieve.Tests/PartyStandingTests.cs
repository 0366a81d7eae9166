using System.Security.Cryptography;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// What a replica answers a client's enrolment lookup: the directory's standing of an id, static, enrolled or revoked
/// through the ordering, or nobody's; a static sender revoked is revoked, not "not enrolled".
/// </summary>
public sealed class PartyStandingTests(TestWorld w) : IClassFixture<TestWorld>
{
    [Fact]
    public void Static_enrolled_revoked_and_unknown_ids_each_stand_as_they_are()
    {
        using var directory = new PublicKeyDirectory(w.Enrolment);
        var staticSender = w.Enrolment.Senders[0];
        var standing = directory.SenderStanding(staticSender.Id);
        Assert.Equal(PartyStandingState.Enrolled, standing.State);
        Assert.False(standing.ThroughOrdering);
        Assert.Equal(staticSender.SignaturePublicKey, standing.SignaturePublicKey);
        Assert.Equal(staticSender.AgreementPublicKey, standing.AgreementPublicKey);

        using var signing = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        using var agreement = ECDiffieHellman.Create(ECCurve.NamedCurves.nistP256);
        var fresh = new EnrolledSender(70, "sender-70", signing.ExportSubjectPublicKeyInfo(), agreement.ExportSubjectPublicKeyInfo());
        directory.SetEnrolmentChanges([new(70, EnrolledParty.Of(fresh)), new(staticSender.Id, null), new(71, null)]);

        var enrolled = directory.SenderStanding(70);
        Assert.Equal(PartyStandingState.Enrolled, enrolled.State);
        Assert.True(enrolled.ThroughOrdering);
        Assert.Equal("sender-70", enrolled.Name);
        Assert.Equal(fresh.SignaturePublicKey, enrolled.SignaturePublicKey);
        Assert.Equal(PartyStandingState.Revoked, directory.SenderStanding(staticSender.Id).State);
        Assert.Empty(directory.SenderStanding(staticSender.Id).SignaturePublicKey);
        Assert.Equal(PartyStandingState.Revoked, directory.SenderStanding(71).State);
        Assert.Equal(PartyStandingState.NotEnrolled, directory.SenderStanding(72).State);

        var receiver = w.Enrolment.Receivers[0];
        Assert.Equal(PartyStandingState.Enrolled, directory.ReceiverStanding(receiver.Id).State);
        Assert.Equal(receiver.SignaturePublicKey, directory.ReceiverStanding(receiver.Id).SignaturePublicKey);
        Assert.Equal(PartyStandingState.NotEnrolled, directory.ReceiverStanding(70).State);

        Assert.True(enrolled.SameAs(enrolled with { }));
        Assert.False(enrolled.SameAs(enrolled with { AgreementPublicKey = staticSender.AgreementPublicKey }));
        Assert.False(enrolled.SameAs(enrolled with { State = PartyStandingState.Revoked }));
    }
}
