using System.Net;
using SieveQ.Controller.Access;
using SieveQ.Controller.Audit;

namespace SieveQ.Controller.Tests;

public sealed class AuditAddressTests
{
    [Theory]
    [InlineData("127.0.0.1", "127.0.0.1")]
    [InlineData("::ffff:192.0.2.7", "192.0.2.7")]
    [InlineData("2001:db8::17", "2001:db8::17")]
    [InlineData("::1", "::1")]
    public void An_address_reads_the_same_whichever_socket_it_reached(string address, string recorded) =>
        Assert.Equal(recorded, AuditAddress.Of(IPAddress.Parse(address)));

    [Fact]
    public void A_call_without_an_address_records_none() => Assert.Null(AuditAddress.Of(null));

    [Fact]
    public void The_longest_address_is_within_its_bound_and_the_longest_actor_fits_an_audit_record()
    {
        var longest = new IPAddress(Enumerable.Repeat((byte)0xff, 16).ToArray(), uint.MaxValue);
        Assert.InRange(AuditAddress.Of(longest)!.Length, 1, AuditAddress.MaxChars);
        using var key = System.Security.Cryptography.ECDsa.Create(System.Security.Cryptography.ECCurve.NamedCurves.nistP256);
        var caller = new CallerIdentity(ManagementSignature.KeyIdOf(key.ExportSubjectPublicKeyInfo()), new string('n', ControllerConfig.MaxCallerNameLength),
            ManagementRole.Administrator, From: new string('a', AuditAddress.MaxChars));
        var record = AuditRecordCodec.Create(1, 0, caller.AuditActor, "recover-replica", "replica-SQ 1", "ok", AuditRecordCodec.GenesisHash);
        Assert.EndsWith(" from " + caller.From, record.Actor, StringComparison.Ordinal);
    }
}
