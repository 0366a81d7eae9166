using SieveQ.Agent.Hosting;
using SieveQ.Sdk.Sender;
using SieveQ.Sieve.Envelope;
using Xunit.Abstractions;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// Message outcomes against a whole deployment of processes: what the replicas' rules reject comes back to the
/// sender as <see cref="MessageOutcomeKind.Rejected"/> with the rule, what they approve as
/// <see cref="MessageOutcomeKind.Delivered"/>. Before, a message above its route's size limit (100 KB against
/// 65,536 B) was acknowledged like any other and never delivered, and the sender could not tell.
/// </summary>
public sealed class OutcomeTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(90);

    [Fact]
    public async Task A_message_the_rules_deny_ends_rejected_with_its_rule_and_the_others_delivered()
    {
        await using var d = await SieveDeployment.StartAsync();
        // Without the fixed routes in its configuration (as with signed rule sets), the sender cannot refuse the
        // oversized message up front: the replicas' verdict is what tells it.
        var config = d.Context.ToClientConfiguration() with { Routes = null };
        await using var sender = SieveQSender.Create(config, 1, Path.Combine(d.Directory, "outcome-sender"));
        var receiver = d.Receiver();
        using var cts = new CancellationTokenSource(Bound);

        var first = await sender.SendAsync(SieveDeployment.ReceiverId, "small one"u8.ToArray(), cts.Token);
        var large = await sender.SendAsync(SieveDeployment.ReceiverId, new byte[100_000], cts.Token);
        var last = await sender.SendAsync(SieveDeployment.ReceiverId, "small two"u8.ToArray(), cts.Token);

        var outcomes = await Task.WhenAll(first.Outcome, large.Outcome, last.Outcome).WaitAsync(cts.Token);
        output.WriteLine(string.Join(Environment.NewLine, outcomes.Select(o => o.ToString())));
        Assert.Equal(MessageOutcomeKind.Delivered, outcomes[0].Kind);
        Assert.Equal(new MessageOutcome(large.Seq, SieveDeployment.ReceiverId, MessageOutcomeKind.Rejected, RejectionReason.RuleDenied, "message too large for route"), outcomes[1]);
        Assert.Equal(MessageOutcomeKind.Delivered, outcomes[2].Kind);
        Assert.Equal((2L, 1L, 0L), (sender.Stats.Delivered, sender.Stats.Rejected, sender.Stats.TimedOut));

        // The receiver gets exactly the two approved ones.
        var got = new List<long>();
        await foreach (var m in receiver.ReadAllAsync(cts.Token))
        {
            Assert.Equal(1, m.Sender);
            got.Add(m.SenderSeq);
            if (m.SenderSeq == last.Seq)
            {
                break;
            }
        }
        Assert.Equal([first.Seq, last.Seq], got);
        d.Passed = true;
    }
}
