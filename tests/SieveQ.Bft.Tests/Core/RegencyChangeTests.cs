using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Tests.Core;

/// <summary>The regency-change state on its own: wishes and their quorums, STOPDATA collection, SYNC deadlines and throttles.</summary>
public class RegencyChangeTests
{
    private static readonly ReplicaConfig Four = new();

    private static StopData StopDataFrom(int from, int regency, long lastDecided = 0, params PreparedCertificate[] certificates) =>
        new(from, regency, lastDecided, certificates, [1]);

    private static PreparedCertificate Certificate(long cid, int regency, Batch value) =>
        new(cid, regency, value.Hash, value, [new WriteSignature(0, [1]), new WriteSignature(1, [1]), new WriteSignature(2, [1])]);

    private static Batch Value(long ts) => new(ts, [new ClientRequest(1000, ts, [(byte)ts])]);

    [Fact]
    public void One_wish_is_not_enough_to_join_and_f_plus_one_is()
    {
        var rc = new RegencyChange(Four, self: 0);
        rc.RecordWish(1, 1);
        Assert.Null(rc.RegencyToJoin(installed: 0));
        rc.RecordWish(2, 1);
        Assert.Equal(1, rc.RegencyToJoin(installed: 0));
        Assert.Null(rc.RegencyToInstall(installed: 0));
    }

    [Fact]
    public void Two_f_plus_one_wishes_install_and_a_liar_far_ahead_moves_nothing()
    {
        var rc = new RegencyChange(Four, self: 0);
        rc.RecordWish(3, 900);
        Assert.Null(rc.RegencyToJoin(installed: 0));
        Assert.True(rc.RaiseOwnWish(1));
        rc.RecordWish(1, 1);
        Assert.Null(rc.RegencyToJoin(installed: 0));
        rc.RecordWish(2, 1);
        Assert.Equal(1, rc.RegencyToInstall(installed: 0));
        Assert.Null(rc.RegencyToInstall(installed: 1));
    }

    [Fact]
    public void Complaints_do_not_stack_and_wishes_never_go_down()
    {
        var rc = new RegencyChange(Four, self: 0);
        Assert.True(rc.RaiseOwnWish(1));
        Assert.False(rc.RaiseOwnWish(1));
        Assert.Equal(1, rc.OwnWish);
        rc.RecordWish(1, 3);
        rc.RecordWish(1, 2);
        rc.RecordWish(2, 3);
        Assert.Equal(3, rc.RegencyToJoin(installed: 0));
    }

    [Fact]
    public void A_stop_is_repeated_only_while_the_wish_is_above_the_installed_regency()
    {
        var rc = new RegencyChange(Four, self: 0);
        Assert.False(rc.StopRebroadcastDue(installed: 0, now: 1_000, interval: 400));
        Assert.Equal(long.MaxValue, rc.NextStopWakeup(installed: 0, interval: 400));
        rc.RaiseOwnWish(1);
        rc.NoteStopBroadcast(100);
        Assert.False(rc.StopRebroadcastDue(installed: 0, now: 499, interval: 400));
        Assert.True(rc.StopRebroadcastDue(installed: 0, now: 500, interval: 400));
        Assert.Equal(500, rc.NextStopWakeup(installed: 0, interval: 400));
        Assert.False(rc.StopRebroadcastDue(installed: 1, now: 500, interval: 400));
    }

    [Fact]
    public void Each_sync_that_never_comes_doubles_the_next_wait_until_one_is_accepted()
    {
        var rc = new RegencyChange(Four, self: 1);
        rc.Enter(1, StopDataFrom(1, 1), now: 0);
        Assert.False(rc.SyncTimedOut(Four.SyncTimeoutMs - 1));
        Assert.True(rc.SyncTimedOut(Four.SyncTimeoutMs));
        Assert.False(rc.SyncTimedOut(Four.SyncTimeoutMs + 1));
        Assert.Equal(1, rc.FailedSyncs);

        rc.Enter(2, StopDataFrom(1, 2), now: 10_000);
        Assert.False(rc.SyncTimedOut(10_000 + (2 * Four.SyncTimeoutMs) - 1));
        Assert.True(rc.SyncTimedOut(10_000 + (2 * Four.SyncTimeoutMs)));

        rc.Enter(3, StopDataFrom(1, 3), now: 20_000);
        rc.Synced(new Sync(3, 3, [], 5, Value(1)));
        Assert.Equal(0, rc.FailedSyncs);
        Assert.Null(rc.OwnStopData);
        Assert.False(rc.SyncTimedOut(long.MaxValue - 1));
    }

    [Fact]
    public void Growing_back_off_stops_at_thirty_two_times_the_sync_time_out()
    {
        var rc = new RegencyChange(Four, self: 1);
        for (var r = 1; r <= 8; r++)
        {
            rc.Enter(r, StopDataFrom(1, r), now: 0);
            Assert.True(rc.SyncTimedOut(long.MaxValue - 1));
        }
        rc.Enter(9, StopDataFrom(1, 9), now: 0);
        Assert.False(rc.SyncTimedOut((32 * Four.SyncTimeoutMs) - 1));
        Assert.True(rc.SyncTimedOut(32 * Four.SyncTimeoutMs));
    }

    [Fact]
    public void A_leader_plans_a_sync_only_from_two_f_plus_one_stopdata_for_its_regency()
    {
        var rc = new RegencyChange(Four, self: 1);
        rc.Enter(1, StopDataFrom(1, 1, lastDecided: 4), now: 0);
        rc.CollectOwnStopData();
        rc.CollectStopData(StopDataFrom(2, 1, lastDecided: 4));
        rc.CollectStopData(StopDataFrom(3, 2, lastDecided: 9));
        Assert.Null(rc.PlanSync(1));
        rc.CollectStopData(StopDataFrom(0, 1, lastDecided: 3));
        var plan = rc.PlanSync(1);
        Assert.NotNull(plan);
        Assert.Equal([0, 1, 2], plan.Evidence.Select(s => s.From));
        Assert.Equal(5, plan.Choice.ConsensusId);
        Assert.Null(plan.Choice.BoundHash);
        Assert.False(plan.BoundValueMissing);
    }

    [Fact]
    public void A_certified_value_and_the_one_below_it_are_bound_and_travel_without_values()
    {
        var v4 = Value(4);
        var v5 = Value(5);
        var rc = new RegencyChange(Four, self: 1);
        rc.Enter(1, StopDataFrom(1, 1, 4, Certificate(5, 0, v5), Certificate(4, 0, v4)), now: 0);
        rc.CollectOwnStopData();
        rc.CollectStopData(StopDataFrom(2, 1, 4));
        rc.CollectStopData(StopDataFrom(3, 1, 3, Certificate(4, 0, v4)));
        var plan = rc.PlanSync(1)!;
        Assert.Equal(5, plan.Choice.ConsensusId);
        Assert.Equal(v5.Hash, plan.BoundValue!.Hash);
        Assert.Equal(v4.Hash, plan.BoundPriorValue!.Hash);
        Assert.All(plan.EvidenceWithoutValues().SelectMany(s => s.Certificates), c => Assert.Null(c.Value));
    }

    [Fact]
    public void Entering_a_regency_forgets_stopdata_for_lower_ones_and_a_lower_one_never_replaces_a_higher()
    {
        var rc = new RegencyChange(Four, self: 1);
        rc.CollectStopData(StopDataFrom(0, 5));
        rc.CollectStopData(StopDataFrom(0, 1));
        rc.CollectStopData(StopDataFrom(2, 5));
        rc.CollectStopData(StopDataFrom(3, 1));
        rc.Enter(5, StopDataFrom(1, 5), now: 0);
        rc.CollectOwnStopData();
        Assert.Equal([0, 1, 2], rc.PlanSync(5)!.Evidence.Select(s => s.From));
    }

    [Fact]
    public void The_accepted_sync_fixes_floor_and_bound_prior_until_the_next_regency()
    {
        var rc = new RegencyChange(Four, self: 0);
        var prior = Value(6);
        rc.Synced(new Sync(1, 1, [], 7, Value(7), prior));
        Assert.Equal(7, rc.Floor);
        Assert.Equal(6, rc.BoundPrior!.Value.Cid);
        Assert.Same(prior, rc.BoundPrior.Value.Value);
        rc.ForgetBoundPrior();
        Assert.Null(rc.BoundPrior);
        rc.Synced(new Sync(1, 1, [], 8, Value(8), prior));
        rc.Enter(2, StopDataFrom(0, 2), now: 0);
        Assert.Null(rc.BoundPrior);
        Assert.Equal(8, rc.Floor);
    }

    [Fact]
    public void Sync_resends_and_nudges_go_at_most_once_per_interval_per_peer()
    {
        var rc = new RegencyChange(Four, self: 0);
        Assert.True(rc.MayResendSync(2, now: 0, interval: 400));
        Assert.False(rc.MayResendSync(2, now: 399, interval: 400));
        Assert.True(rc.MayResendSync(3, now: 399, interval: 400));
        Assert.True(rc.MayResendSync(2, now: 400, interval: 400));
        Assert.True(rc.MayNudge(2, now: 0, interval: 400));
        Assert.False(rc.MayNudge(2, now: 100, interval: 400));
    }
}
