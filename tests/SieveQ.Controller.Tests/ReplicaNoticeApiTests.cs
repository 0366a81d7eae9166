using System.Security.Cryptography;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Controller.Access;
using SieveQ.Protocol.V1;
using SieveQ.Transport;

namespace SieveQ.Controller.Tests;

/// <summary>sieveq.v1.Controller/ReplicaNotice over real HTTP/2: replica keys only, and only for this method.</summary>
public sealed class ReplicaNoticeApiTests : IAsyncLifetime
{
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "sieveq-controller-" + Guid.NewGuid().ToString("N"));
    private readonly ECDsa[] _replicas = [.. Enumerable.Range(0, 4).Select(_ => ECDsa.Create(ECCurve.NamedCurves.nistP256))];
    private readonly ECDsa _operator = ECDsa.Create(ECCurve.NamedCurves.nistP256);
    private ControllerHost _host = null!;

    public async Task InitializeAsync()
    {
        var callers = _replicas.Select((k, i) => new PinnedCaller($"replica-sq-{i}", ManagementRole.Replica, k.ExportSubjectPublicKeyInfo(), i))
            .Append(new PinnedCaller("olga", ManagementRole.Operator, _operator.ExportSubjectPublicKeyInfo())).ToList();
        _host = ControllerHost.Create(new Uri($"http://127.0.0.1:{ControllerFixture.FreePort()}"), callers, Path.Combine(_dir, "audit"),
            _ => Task.FromResult(ControllerFixture.FakeComponents), NullLoggerFactory.Instance, new ControllerHostOptions { ReplicaFaults = 1 });
        await _host.StartAsync();
    }

    [Fact]
    public async Task A_notice_is_recorded_when_the_second_replica_reports_it_and_only_then()
    {
        using var r0 = new ManagementClient(_host.Url, _replicas[0]);
        using var r3 = new ManagementClient(_host.Url, _replicas[3]);
        var first = await r0.ReplicaNoticeAsync("sender-quarantined", 2, 777);
        Assert.False(first.Applied);
        Assert.Contains("waiting for f+1", first.Status, StringComparison.Ordinal);
        // The same replica again (a new request, a new nonce) is still one replica.
        Assert.False((await r0.ReplicaNoticeAsync("sender-quarantined", 2, 777)).Applied);
        Assert.DoesNotContain(_host.Audit.Tail(20), r => r.Action.StartsWith("replica-notice", StringComparison.Ordinal));

        var second = await r3.ReplicaNoticeAsync("sender-quarantined", 2, 777);
        Assert.True(second.Applied);
        var record = Assert.Single(_host.Audit.Tail(20), r => r.Action == "replica-notice sender-quarantined");
        Assert.Equal((second.AuditSequence, "f+1 replicas [0, 3]", "sender 2 (decided at agreed time 777)"), (record.Sequence, record.Actor, record.Target));
        using var r1 = new ManagementClient(_host.Url, _replicas[1]);
        Assert.False((await r1.ReplicaNoticeAsync("sender-quarantined", 2, 777)).Applied);
        Assert.Single(_host.Audit.Tail(20), r => r.Action == "replica-notice sender-quarantined");
    }

    [Fact]
    public async Task Only_replica_keys_may_report_and_replica_keys_may_do_nothing_else()
    {
        using var op = new ManagementClient(_host.Url, _operator);
        Assert.Equal(GrpcStatusCode.PermissionDenied, (await Assert.ThrowsAsync<GrpcCallException>(() => op.ReplicaNoticeAsync("add-pre-sq", 4, 1))).Status);
        using var replica = new ManagementClient(_host.Url, _replicas[0]);
        Assert.Equal(GrpcStatusCode.PermissionDenied, (await Assert.ThrowsAsync<GrpcCallException>(() => replica.StatusAsync())).Status);
        Assert.Equal(GrpcStatusCode.PermissionDenied, (await Assert.ThrowsAsync<GrpcCallException>(() => replica.QuarantineSenderAsync(1, "x"))).Status);
        Assert.Equal(GrpcStatusCode.InvalidArgument, (await Assert.ThrowsAsync<GrpcCallException>(() => replica.ReplicaNoticeAsync("reboot-everything", 4, 1))).Status);
        Assert.Equal(GrpcStatusCode.InvalidArgument, (await Assert.ThrowsAsync<GrpcCallException>(() => replica.ReplicaNoticeAsync("add-pre-sq", 4, 0))).Status);
    }

    public async Task DisposeAsync()
    {
        await _host.StopAsync();
        await _host.DisposeAsync();
        foreach (var k in _replicas.Append(_operator))
        {
            k.Dispose();
        }
        Directory.Delete(_dir, recursive: true);
    }
}
