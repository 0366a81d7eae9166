using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Tests.Core;

/// <summary>The state-transfer state on its own: vouched progress, when to start, attempts, and what f+1 replies agree on.</summary>
public class StateTransferTests
{
    private static readonly ReplicaConfig Four = new();

    private static Batch Value(long ts) => new(ts, [new ClientRequest(1000, ts, [(byte)ts])]);

    private static LoggedDecision Entry(long cid, Batch value, bool withValue) => new(cid, value.Hash, withValue ? value : null);

    private static StateReply Reply(int from, long checkpoint, Digest stateHash, StateManifest? manifest, params LoggedDecision[] log) =>
        new(from, checkpoint, stateHash, manifest?.Root ?? default, manifest, log);

    [Fact]
    public void Vouched_progress_is_the_f_plus_one_highest_peer_claim_and_ours_does_not_count()
    {
        var st = new StateTransfer(Four, self: 0);
        st.NoteProgress(0, 100);
        st.NoteProgress(1, 50);
        Assert.Equal(0, st.VouchedProgress());
        st.NoteProgress(2, 7);
        Assert.Equal(7, st.VouchedProgress());
        st.NoteProgress(2, 3);
        Assert.Equal(7, st.ProgressOf(2));
        st.NoteProgress(9, 1_000);
        Assert.Equal(7, st.VouchedProgress());
    }

    [Fact]
    public void Two_behind_what_f_plus_one_vouch_starts_at_once_one_behind_only_when_quiet()
    {
        var st = new StateTransfer(Four, self: 3);
        st.NoteProgress(0, 6);
        st.NoteProgress(1, 6);
        Assert.Equal("peers-ahead", st.ReasonToStart(lastDecided: 4, quiet: false, leader: 0));
        Assert.Null(st.ReasonToStart(lastDecided: 5, quiet: false, leader: 0));
        Assert.Equal("peers-ahead", st.ReasonToStart(lastDecided: 5, quiet: true, leader: 0));
        Assert.Null(st.ReasonToStart(lastDecided: 6, quiet: true, leader: 0));
    }

    [Fact]
    public void The_leader_alone_ahead_starts_a_transfer_only_when_quiet()
    {
        var st = new StateTransfer(Four, self: 3);
        st.NoteProgress(0, 9);
        Assert.Null(st.ReasonToStart(lastDecided: 5, quiet: false, leader: 0));
        Assert.Equal("leader-ahead", st.ReasonToStart(lastDecided: 5, quiet: true, leader: 0));
        Assert.Null(st.ReasonToStart(lastDecided: 5, quiet: true, leader: 1));
    }

    [Fact]
    public void The_body_is_asked_of_a_different_peer_each_attempt_until_one_completes()
    {
        var st = new StateTransfer(Four, self: 1);
        Assert.Equal(2, st.Begin(now: 0));
        Assert.True(st.InProgress);
        Assert.Null(st.ReasonToStart(lastDecided: 0, quiet: true, leader: 0));
        Assert.False(st.Expire(Four.StateTransferTimeoutMs - 1));
        Assert.Equal(Four.StateTransferTimeoutMs, st.NextWakeup());
        Assert.True(st.Expire(Four.StateTransferTimeoutMs));
        Assert.False(st.InProgress);
        Assert.Equal(long.MaxValue, st.NextWakeup());
        Assert.Equal(3, st.Begin(now: 0));
        st.Expire(long.MaxValue);
        Assert.Equal(0, st.Begin(now: 0));
        Assert.True(st.FinishIfCaughtUp(lastDecided: 0));
        Assert.Equal(2, st.Begin(now: 0));
    }

    [Fact]
    public void An_attempt_ends_only_once_we_reach_one_below_what_f_plus_one_vouch()
    {
        var st = new StateTransfer(Four, self: 3);
        st.NoteProgress(0, 10);
        st.NoteProgress(1, 10);
        st.Begin(now: 0);
        Assert.False(st.FinishIfCaughtUp(lastDecided: 8));
        Assert.True(st.InProgress);
        Assert.True(st.FinishIfCaughtUp(lastDecided: 9));
        Assert.False(st.InProgress);
    }

    [Fact]
    public void Replies_are_kept_only_for_an_attempt_in_flight()
    {
        var st = new StateTransfer(Four, self: 3);
        Assert.False(st.Collect(Reply(0, 0, default, null)));
        st.Begin(now: 0);
        Assert.True(st.Collect(Reply(0, 0, default, null)));
    }

    [Fact]
    public void A_checkpoint_is_fetched_once_f_plus_one_replies_name_its_hash_and_manifest_as_current_or_previous()
    {
        var st = new StateTransfer(Four, self: 3);
        st.Begin(now: 0);
        var state = new byte[3000];
        var good = Digest.Compute(state);
        var manifest = StateManifest.Of(state, Four.StateChunkBytes);
        st.Collect(Reply(0, 64, good, manifest));
        Assert.Null(st.StartFetch(lastDecided: 0));
        st.Collect(Reply(2, 64, Digest.Compute([2]), manifest));
        Assert.Null(st.StartFetch(lastDecided: 0));
        st.Collect(new StateReply(1, 128, Digest.Compute([3]), default, null, [], 64, good, manifest.Root));
        Assert.Null(st.StartFetch(lastDecided: 64));
        var fetch = st.StartFetch(lastDecided: 0);
        Assert.NotNull(fetch);
        Assert.Equal((64L, good), (fetch.CheckpointId, fetch.StateHash));
        Assert.Same(fetch, st.Fetch);
        Assert.Null(st.StartFetch(lastDecided: 0));
    }

    [Fact]
    public void A_manifest_whose_root_is_not_the_vouched_one_starts_no_fetch()
    {
        var st = new StateTransfer(Four, self: 3);
        st.Begin(now: 0);
        var state = new byte[3000];
        var good = Digest.Compute(state);
        var manifest = StateManifest.Of(state, Four.StateChunkBytes);
        var lie = manifest with { ChunkHashes = [Digest.Compute([9])] };
        st.Collect(new StateReply(0, 64, good, manifest.Root, lie, []));
        st.Collect(new StateReply(1, 64, good, manifest.Root, null, []));
        Assert.Null(st.StartFetch(lastDecided: 0));
        st.Collect(Reply(2, 64, good, manifest));
        Assert.NotNull(st.StartFetch(lastDecided: 0));
    }

    [Fact]
    public void A_decision_counts_once_f_plus_one_replies_name_it_and_one_of_them_carries_a_value_matching_its_hash()
    {
        var st = new StateTransfer(Four, self: 3);
        st.Begin(now: 0);
        var v1 = Value(1);
        var v2 = Value(2);
        var forged = Value(99);
        st.Collect(Reply(0, 0, default, null, Entry(1, v1, withValue: true), Entry(2, v2, withValue: true)));
        Assert.Null(st.VouchedDecisions().ValueFor(1));
        st.Collect(Reply(1, 0, default, null, Entry(1, v1, withValue: false), new LoggedDecision(2, forged.Hash, null)));
        var log = st.VouchedDecisions();
        Assert.Equal(v1.Hash, log.ValueFor(1)!.Hash);
        Assert.Null(log.ValueFor(2));
        Assert.Null(log.ValueFor(3));
    }

    [Fact]
    public void A_peer_asking_for_state_is_served_at_most_once_per_interval()
    {
        var st = new StateTransfer(Four, self: 0);
        Assert.True(st.MayServe(1, now: 0));
        Assert.False(st.MayServe(1, now: Four.StateServeIntervalMs - 1));
        Assert.True(st.MayServe(2, now: 1));
        Assert.True(st.MayServe(1, now: Four.StateServeIntervalMs));
    }
}
