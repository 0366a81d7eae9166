using System.Diagnostics;
using SieveQ.Controller;
using SieveQ.Controller.Access;
using Xunit.Abstractions;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// The sieve healing itself across real processes (paper 4.4.2), with no administrator: a pre-SQ passes messages whose
/// sender signatures are bad, the replica-SQs suspect it in the agreed order and each reports `remove-pre-sq` to the
/// controller, which replaces that pre-SQ once f+1 of them did; an honest sender's traffic meanwhile is delivered
/// exactly once, in order.
/// </summary>
public sealed class PreSqSelfHealingProcessTests(ITestOutputHelper output)
{
    private const int Honest = 1;
    private const int Forger = 2;
    private static readonly TimeSpan Bound = TimeSpan.FromMinutes(3);

    [Fact]
    public async Task A_pre_sq_that_passes_bad_signatures_is_replaced_by_the_controller_on_f_plus_1_replicas_notices()
    {
        await using var controller = new ControllerOwner(output);
        await using var d = await SieveDeployment.StartAsync(senders: [Honest, Forger], startedElsewhere: controller.HostAsync);
        output.WriteLine($"deployment in {d.Directory}");
        var suspected = d.PreSqIds[0];
        var admin = ControllerConfig.LocalKeyFile(d.Config, ManagementRole.Administrator);

        var receiver = d.Receiver();
        var log = new DeliveryLog();
        var expected = new Dictionary<int, int> { [Honest] = 60 };
        var reading = log.ReadUntilAsync(receiver, expected, Bound);
        // On the pre-SQ about to be replaced: its traffic must survive the quarantine, the move and the replacement.
        var sender = d.Sender(Honest, new SieveQ.Sdk.Sender.SieveQSenderOptions { UnavailableAfter = Bound, InitialPreSq = suspected });

        // What a faulty pre-SQ would pass: the sender's own MAC on the frame (so the pre-SQ's checks pass), a signature
        // that is not the sender's. Each costs the pre-SQ that passed it suspicion at every correct replica.
        await using (var forger = new CompromisedSender(d.Context, Forger))
        {
            await forger.SendAsync(suspected, Enumerable.Range(1, 10).Select(seq => WithBadSignature(forger.Message(seq))));
            var clock = Stopwatch.StartNew();
            await Traffic.SendAsync(sender, 60, Bound, onEach: _ => Task.Delay(50));
            var audit = await WaitForAuditAsync(d, admin, $"replace-pre-sq pre-sq {suspected} ", "replaced: started pid ");
            output.WriteLine($"replaced within {clock.Elapsed.TotalSeconds:0.0} s of the forged messages");
            output.WriteLine(audit);
            var lines = audit.Split('\n');
            Assert.Contains(lines, l => l.Contains("replica-notice remove-pre-sq", StringComparison.Ordinal) && l.Contains("f+1 replicas [", StringComparison.Ordinal)
                && l.Contains($"pre-sq {suspected} ", StringComparison.Ordinal));
            Assert.Contains(lines, l => l.Contains($"replace-pre-sq pre-sq {suspected} ", StringComparison.OrdinalIgnoreCase) && l.Contains("f+1 replicas [", StringComparison.Ordinal));
            // Only the pre-SQ that passed the forgeries: the other one is never replaced.
            Assert.DoesNotContain(lines, l => l.Contains($"replace-pre-sq pre-sq {d.PreSqIds[1]} ", StringComparison.OrdinalIgnoreCase));
        }
        await reading;
        log.AssertExactlyOnceInOrder(expected);
        d.Passed = true;
    }

    /// <summary>The message with the last byte of its P1363 signature (the message's last byte) changed.</summary>
    private static byte[] WithBadSignature(byte[] message)
    {
        var forged = (byte[])message.Clone();
        forged[^1] ^= 0x5A;
        return forged;
    }

    /// <summary>The audit log (`sieveq admin audit`, as an operator reads it) once a line holds both texts; fails after the bound.</summary>
    private static async Task<string> WaitForAuditAsync(SieveDeployment d, string admin, string action, string outcome)
    {
        var deadline = DateTime.UtcNow + Bound;
        while (true)
        {
            var (code, text) = await AdminProcess.RunAsync(["admin", "audit", "--count", "60", "--deployment", d.Directory, "--key", admin]);
            Assert.True(code == 0, text);
            // The administrator's records name "pre-SQ N", the replicas' notices "pre-sq N".
            if (text.Split('\n').Any(l => l.Contains(action, StringComparison.OrdinalIgnoreCase) && l.Contains(outcome, StringComparison.Ordinal)))
            {
                return text;
            }
            Assert.True(DateTime.UtcNow < deadline, $"no '{action}' ... '{outcome}' in the audit log within {Bound}:\n{text}\n{await d.DescribeAsync()}");
            await Task.Delay(TimeSpan.FromSeconds(1));
        }
    }
}
