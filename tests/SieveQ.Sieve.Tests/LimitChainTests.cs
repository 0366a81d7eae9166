using System.Security.Cryptography;
using SieveQ.Bft.Core;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.PreSq;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// One table of limits, derived in one place: whatever the edge accepts, every inner layer accepts. A 1 MiB
/// message used to make an ordering request the replicas' decoder refused, retried for ever (issue 16, item 3).
/// </summary>
public sealed class LimitChainTests
{
    [Fact]
    public void The_largest_message_and_the_largest_rule_set_command_fit_one_ordering_request_of_a_default_cluster()
    {
        var cluster = new ReplicaConfig();
        Assert.True(EnvelopeLimits.MinOrderingPayloadBytes <= cluster.MaxRequestPayloadBytes,
            $"a default cluster orders {cluster.MaxRequestPayloadBytes} bytes, an ordering request may need {EnvelopeLimits.MinOrderingPayloadBytes}");
        Assert.True(EnvelopeLimits.MinOrderingPayloadBytes <= EnvelopeLimits.MaxOrderingPayloadBytes);
        Assert.True(EnvelopeLimits.MaxSenderFrameBodyBytes < EnvelopeLimits.MaxOrderingItemBytes + 1);
        Assert.True(EnvelopeLimits.MaxRuleSetCommandBytes < EnvelopeLimits.MaxOrderingItemBytes + 1);
    }

    [Fact]
    public void A_message_of_the_largest_data_is_a_frame_body_the_edge_accepts_and_a_lone_batch_within_the_bound()
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var region = SenderMessageCodec.EncodeSignedRegion(7, 1, 100, new byte[EnvelopeLimits.MaxDataBytes]);
        var message = SenderMessageCodec.SignSingle(region, key);
        Assert.InRange(message.Length, EnvelopeLimits.MaxDataBytes, EnvelopeLimits.MaxSenderFrameBodyBytes);

        using var batcher = new OrderingBatcher(4, new PreSqOptions { BatchMaxBytes = 64 * 1024 });
        var closed = batcher.Add(message, nowMs: 0);
        Assert.NotNull(closed);
        Assert.InRange(closed!.Length, message.Length, EnvelopeLimits.MinOrderingPayloadBytes);
        Assert.Single(OrderingRequestCodec.Decode(closed).Items);
    }

    [Fact]
    public void The_largest_rule_set_command_is_exactly_what_the_decoder_and_the_limit_table_allow()
    {
        using var admin = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var region = RuleSetCommandCodec.EncodePublish(1, new byte[EnvelopeLimits.MaxRuleSetDocumentBytes], new byte[EnvelopeLimits.MaxRuleSetSignatureFileBytes]);
        var command = RuleSetCommandCodec.Sign(region, admin);
        Assert.True(command.Length <= EnvelopeLimits.MaxRuleSetCommandBytes, $"{command.Length} > {EnvelopeLimits.MaxRuleSetCommandBytes}");
        var payload = OrderingRequestCodec.Encode(4, [command]);
        Assert.True(payload.Length <= EnvelopeLimits.MinOrderingPayloadBytes);
    }
}
