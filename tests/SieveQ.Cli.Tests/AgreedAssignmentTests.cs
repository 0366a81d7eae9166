using SieveQ.Deployment;

namespace SieveQ.Cli.Tests;

/// <summary>The f+1 rule by which the console and `sieveq status` read the replicas' sender assignment.</summary>
public sealed class AgreedAssignmentTests
{
    private static Dictionary<string, long> Replica(params (int Sender, long PreSq)[] assigned) =>
        assigned.ToDictionary(a => $"assigned.sender.{a.Sender}", a => a.PreSq);

    private static AgreedAssignment Tally(int f, params Dictionary<string, long>[] replicas) =>
        AgreedAssignment.Tally(replicas, f, int.MaxValue);

    [Fact]
    public void A_sender_f_plus_one_replicas_place_at_one_pre_sq_counts_for_it()
    {
        // f = 1, n = 4: all four agree on sender 1; exactly two agree on sender 2 and the other two report nothing.
        var a = Tally(1, Replica((1, 4), (2, 5)), Replica((1, 4), (2, 5)), Replica((1, 4)), Replica((1, 4)));
        Assert.Equal(new[] { 1 }, a.ByPreSq[4]);
        Assert.Equal(new[] { 2 }, a.ByPreSq[5]);
        Assert.Empty(a.Moving);
        Assert.Equal(0, a.NotTallied);
    }

    [Fact]
    public void Pre_sqs_and_senders_come_out_ascending()
    {
        var a = Tally(0, Replica((9, 7), (3, 2), (5, 7), (1, 2)));
        Assert.Equal(new[] { 2L, 7L }, a.ByPreSq.Keys);
        Assert.Equal(new[] { 1, 3 }, a.ByPreSq[2]);
        Assert.Equal(new[] { 5, 9 }, a.ByPreSq[7]);
    }

    [Fact]
    public void Replicas_that_disagree_with_f_plus_one_on_each_side_leave_the_sender_moving()
    {
        // Two say 4, two say 5: each has f+1, so neither is the agreed one (a move half executed, or f liars and a slow replica).
        var a = Tally(1, Replica((1, 4)), Replica((1, 4)), Replica((1, 5)), Replica((1, 5)));
        Assert.Empty(a.ByPreSq);
        Assert.Equal(new[] { 1 }, a.Moving);
    }

    [Fact]
    public void Fewer_than_f_plus_one_reporting_leaves_the_sender_moving()
    {
        // f = 1: one replica alone says 4; the others report no assignment for the sender at all.
        var a = Tally(1, Replica((1, 4)), Replica(), Replica(), Replica());
        Assert.Empty(a.ByPreSq);
        Assert.Equal(new[] { 1 }, a.Moving);
        // No replica answered: nothing is reported, nothing is moving.
        Assert.Empty(Tally(1).Moving);
    }

    [Fact]
    public void A_byzantine_replicas_odd_value_moves_nothing()
    {
        // f = 1: replica 3 reports sender 1 at a pre-SQ no one else names, and a sender only it knows.
        var a = Tally(1, Replica((1, 4)), Replica((1, 4)), Replica((1, 4)), Replica((1, 999), (77, 4)));
        Assert.Equal(new[] { 1 }, a.ByPreSq[4]);
        Assert.False(a.ByPreSq.ContainsKey(999));
        Assert.Equal(new[] { 77 }, a.Moving);
    }

    [Fact]
    public void Other_keys_and_malformed_sender_ids_are_ignored()
    {
        var odd = new Dictionary<string, long>
        {
            ["assigned.sender.x"] = 4, ["assigned.sender.-1"] = 4, ["assigned.sender. 2"] = 4, ["assigned.sender."] = 4,
            ["assigned.sender.99999999999"] = 4, ["last_loss_ppm.sender.3"] = 4, ["queue.100"] = 4,
        };
        var a = Tally(0, odd);
        Assert.Empty(a.ByPreSq);
        Assert.Empty(a.Moving);
    }

    [Fact]
    public void Only_the_lowest_ids_up_to_the_bound_are_tallied_and_the_rest_counted()
    {
        var replica = Replica([.. Enumerable.Range(1, 10).Select(s => (s, 4L))]);
        var a = AgreedAssignment.Tally([replica, replica], f: 1, maxSenders: 3);
        Assert.Equal(new[] { 1, 2, 3 }, a.ByPreSq[4]);
        Assert.Equal(7, a.NotTallied);
    }

    [Fact]
    public void A_negative_f_or_bound_is_refused()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => AgreedAssignment.Tally([], -1, 10));
        Assert.Throws<ArgumentOutOfRangeException>(() => AgreedAssignment.Tally([], 1, -1));
    }
}
