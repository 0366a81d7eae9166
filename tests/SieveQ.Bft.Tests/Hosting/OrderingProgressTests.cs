using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Replica;

namespace SieveQ.Bft.Tests.Hosting;

/// <summary>Health's view of ordering: work waiting with no decision, or a regency change that does not end, is a stall.</summary>
public class OrderingProgressTests
{
    private static readonly ReplicaStatus Ordering = new() { Mode = "Normal", Regency = 3, LastDecided = 1002, PendingRequests = 40, LastDecisionAgeMs = 20, ModeAgeMs = 60_000 };

    [Fact]
    public void A_replica_deciding_is_ordering_and_an_idle_one_is_not_stalled()
    {
        Assert.Null(OrderingProgress.Stall(Ordering, 5_000));
        Assert.Null(OrderingProgress.Stall(Ordering with { PendingRequests = 0, LastDecisionAgeMs = 600_000 }, 5_000));
    }

    [Fact]
    public void Pending_requests_with_no_decision_past_the_bound_are_a_stall_named_with_its_state()
    {
        var stalled = Ordering with { LastDecisionAgeMs = 70_000, Regency = 48, TransferringState = true };
        var why = OrderingProgress.Stall(stalled, 5_000);
        Assert.NotNull(why);
        Assert.Contains("not ordering: 40 requests pending and nothing decided for 70.0 s", why, StringComparison.Ordinal);
        Assert.Contains("regency 48", why, StringComparison.Ordinal);
        Assert.Contains("last decided 1002", why, StringComparison.Ordinal);
        Assert.Contains("transferring state", why, StringComparison.Ordinal);
        Assert.Null(OrderingProgress.Stall(stalled with { LastDecisionAgeMs = 4_999 }, 5_000));
    }

    [Fact]
    public void A_regency_change_that_does_not_end_is_a_stall_even_with_nothing_pending()
    {
        var changing = Ordering with { Mode = "RegencyChange", ModeAgeMs = 9_000, PendingRequests = 0 };
        Assert.Contains("regency change to 3 unfinished for 9.0 s", OrderingProgress.Stall(changing, 5_000), StringComparison.Ordinal);
        Assert.Null(OrderingProgress.Stall(changing with { ModeAgeMs = 1_000 }, 5_000));
    }

    [Fact]
    public void The_default_bound_leaves_room_for_one_regency_change()
    {
        var p = new ReplicaConfig();
        Assert.True(OrderingProgress.DefaultStallAfterMs(p) > (2 * p.RequestTimeoutMs) + p.SyncTimeoutMs);
    }
}
