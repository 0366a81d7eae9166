namespace SieveQ.ReplicaSq.Tests;

/// <summary>
/// Health sees a stall, not only a dead process: with two of four replica-SQs gone the others cannot order, and
/// once a request has waited past the stall bound their health says so and why. Its own cluster: the test
/// stops replicas.
/// </summary>
public sealed class OrderingStallHealthTests : IAsyncLifetime
{
    private readonly ReplicaSqCluster _cluster = new();

    public Task InitializeAsync() => _cluster.InitializeAsync();

    public Task DisposeAsync() => _cluster.DisposeAsync();

    [Fact]
    public async Task A_replica_that_cannot_order_reports_itself_unhealthy_with_the_reason()
    {
        var ok = await _cluster.SubmitAsync(_cluster.Message(1, _cluster.NextSeq(1), [1, 2, 3]));
        Assert.NotNull(ok);
        // Links between the replicas may still be coming up right after the start.
        await ReplicaSqCluster.EventuallyAsync(() => _cluster.Hosts.All(h => h.Health().Healthy),
            "all four healthy: " + string.Join("; ", _cluster.Hosts.Select(h => h.Health().Detail)));

        // Replicas 2 and 3 go away: 0 and 1 keep their links to each other only, below a quorum.
        await _cluster.Hosts[2].DisposeAsync();
        await _cluster.Hosts[3].DisposeAsync();
        using var cts = new CancellationTokenSource();
        var pending = _cluster.Ordering.SubmitAsync(
            SieveQ.Sieve.Envelope.OrderingRequestCodec.Encode(_cluster.PreSq, [_cluster.Message(1, _cluster.NextSeq(1), [4])]), cts.Token);

        await ReplicaSqCluster.EventuallyAsync(
            () => _cluster.Hosts[0].Health() is { Healthy: false } h && h.Detail.Contains("not ordering", StringComparison.Ordinal),
            "replica 0 to report that it is not ordering", timeoutMs: 30_000);
        var detail = _cluster.Hosts[0].Health().Detail;
        Assert.True(detail.Contains("requests pending and nothing decided", StringComparison.Ordinal)
            || detail.Contains("regency change to", StringComparison.Ordinal), detail);
        await cts.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => pending);
    }
}
