using SieveQ.Controller.Replicas;

namespace SieveQ.Controller.Tests;

/// <summary>The controller's count of replica notices: f+1 distinct replicas, once; a liar fills only its own share.</summary>
public class ReplicaNoticeTallyTests
{
    private static readonly ReplicaNotice Remove5 = new("remove-pre-sq", 5, 1_000);

    [Fact]
    public void F_plus_one_distinct_replicas_reach_a_notice_once_and_one_replica_repeating_itself_does_not()
    {
        var tally = new ReplicaNoticeTally(f: 1);
        Assert.Equal(ReplicaNoticeStanding.Waiting, tally.Report(2, Remove5, out _));
        Assert.Equal(ReplicaNoticeStanding.Waiting, tally.Report(2, Remove5, out _));
        // Another decision (another agreed time) about the same pre-SQ is another notice.
        Assert.Equal(ReplicaNoticeStanding.Waiting, tally.Report(0, Remove5 with { AgreedTimeMs = 2_000 }, out _));
        Assert.Equal(ReplicaNoticeStanding.Reached, tally.Report(0, Remove5, out var replicas));
        Assert.Equal([0, 2], replicas);
        Assert.Equal(ReplicaNoticeStanding.AlreadyReached, tally.Report(3, Remove5, out _));
        Assert.Equal(ReplicaNoticeStanding.AlreadyReached, tally.Report(1, Remove5, out _));
        Assert.Equal(1, tally.Waiting);
    }

    [Fact]
    public void A_replica_that_floods_notices_fills_its_own_share_only()
    {
        var tally = new ReplicaNoticeTally(f: 1);
        for (var i = 0; i < ReplicaNoticeTally.MaxWaitingPerReplica; i++)
        {
            Assert.Equal(ReplicaNoticeStanding.Waiting, tally.Report(3, new ReplicaNotice("add-pre-sq", 4, 10_000 + i), out _));
        }
        Assert.Equal(ReplicaNoticeStanding.ReplicaShareFull, tally.Report(3, Remove5, out _));
        // The correct replicas' notice is still counted and reached.
        Assert.Equal(ReplicaNoticeStanding.Waiting, tally.Report(0, Remove5, out _));
        Assert.Equal(ReplicaNoticeStanding.Reached, tally.Report(1, Remove5, out var replicas));
        Assert.Equal([0, 1], replicas);
        // Once one of the liar's notices is confirmed by another replica, it leaves the table and frees the liar's share.
        Assert.Equal(ReplicaNoticeStanding.Reached, tally.Report(0, new ReplicaNotice("add-pre-sq", 4, 10_000), out _));
        Assert.Equal(ReplicaNoticeStanding.Waiting, tally.Report(3, Remove5 with { Subject = 4 }, out _));
    }

    [Fact]
    public void A_notice_nobody_confirms_is_forgotten_after_the_waiting_time()
    {
        var time = new ShiftedTime(TimeSpan.Zero);
        var tally = new ReplicaNoticeTally(f: 1, time);
        Assert.Equal(ReplicaNoticeStanding.Waiting, tally.Report(0, Remove5, out _));
        time.Shift = ReplicaNoticeTally.WaitingFor + TimeSpan.FromSeconds(1);
        Assert.Equal(ReplicaNoticeStanding.Waiting, tally.Report(1, Remove5, out _));
        Assert.Equal(1, tally.Waiting);
    }
}
