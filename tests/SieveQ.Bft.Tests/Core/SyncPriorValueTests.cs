using SieveQ.Bft.Codec;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Tests.Core;

/// <summary>SYNC carries the value its evidence binds for the instance below its own; the codec keeps it exactly.</summary>
public class SyncPriorValueTests
{
    private static Batch Batch(long ts, params byte[] payload) => new(ts, [new ClientRequest(1000, ts, payload)]);

    [Fact]
    public void A_sync_with_and_without_a_prior_value_round_trips()
    {
        var evidence = new StopData(2, 1, 4, [], [7, 7]);
        var withPrior = new Sync(1, 1, [evidence], 6, Batch(10, 1), Batch(9, 2));
        var back = Assert.IsType<Sync>(MessageCodec.Decode(MessageCodec.Encode(withPrior)));
        Assert.Equal(withPrior.Value!.Hash, back.Value!.Hash);
        Assert.Equal(withPrior.PriorValue!.Hash, back.PriorValue!.Hash);

        var without = withPrior with { PriorValue = null };
        var back2 = Assert.IsType<Sync>(MessageCodec.Decode(MessageCodec.Encode(without)));
        Assert.Null(back2.PriorValue);
        Assert.NotEqual(MessageCodec.Encode(withPrior), MessageCodec.Encode(without));
    }

    [Fact]
    public void A_sync_cut_before_its_prior_value_is_malformed()
    {
        var sync = new Sync(1, 1, [new StopData(2, 1, 4, [], [7])], 6, Batch(10, 1), Batch(9, 2));
        var frame = MessageCodec.Encode(sync);
        var withoutPrior = MessageCodec.Encode(sync with { PriorValue = null });
        // The frame without a prior ends with the "absent" flag; dropping it leaves a frame one field short.
        Assert.Throws<MalformedMessageException>(() => MessageCodec.Decode(withoutPrior.AsSpan(0, withoutPrior.Length - 1).ToArray()));
        Assert.True(frame.Length > withoutPrior.Length);
    }
}
