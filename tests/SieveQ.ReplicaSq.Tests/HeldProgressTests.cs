namespace SieveQ.ReplicaSq.Tests;

/// <summary>
/// Health sees a sieve that holds messages and processes none (a restarted deployment once sat like that, every
/// component healthy); times are given, not waited for.
/// </summary>
public sealed class HeldProgressTests
{
    [Fact]
    public void Held_messages_with_nothing_processed_past_the_bound_are_a_stall_and_progress_or_an_empty_buffer_clears_it()
    {
        var p = new HeldProgress(stallAfterMs: 1_000);
        Assert.Null(p.Stall(processed: 10, held: 5, nowMs: 0));
        Assert.Null(p.Stall(processed: 10, held: 5, nowMs: 999));
        var stall = p.Stall(processed: 10, held: 5, nowMs: 1_000);
        Assert.NotNull(stall);
        Assert.Contains("5 messages held", stall, StringComparison.Ordinal);

        // Something processed: the clock starts again.
        Assert.Null(p.Stall(processed: 11, held: 5, nowMs: 1_500));
        Assert.Null(p.Stall(processed: 11, held: 5, nowMs: 2_400));
        Assert.NotNull(p.Stall(processed: 11, held: 5, nowMs: 2_500));

        // Nothing held: an idle sieve is no stall, however long it idles.
        Assert.Null(p.Stall(processed: 11, held: 0, nowMs: 3_000));
        Assert.Null(p.Stall(processed: 11, held: 0, nowMs: 60_000));
        Assert.Null(p.Stall(processed: 11, held: 1, nowMs: 60_500));
        Assert.NotNull(p.Stall(processed: 11, held: 1, nowMs: 61_500));
    }
}
