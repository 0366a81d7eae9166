using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Sender;
using Xunit.Abstractions;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>What one run of <see cref="TwoSenderRun"/> leaves for the test to check.</summary>
internal sealed record TwoSenderResult(DeliveryLog Log, IReadOnlyList<SieveQSender> Senders, SieveQReceiver Receiver);

/// <summary>
/// The common load of the sieve tests: senders 1 and 2 each send <c>perSender</c> messages while one
/// receiver reads and checks them; progress goes to the test output every few seconds, and every
/// component's counters too when the run does not finish in time.
/// </summary>
internal static class TwoSenderRun
{
    public static async Task<TwoSenderResult> RunAsync(SieveDeployment d, ITestOutputHelper output, int perSender, TimeSpan bound)
    {
        output.WriteLine($"deployment in {d.Directory}");
        var expected = new Dictionary<int, int> { [1] = perSender, [2] = perSender };
        var receiver = d.Receiver();
        var log = new DeliveryLog();
        var reading = log.ReadUntilAsync(receiver, expected, bound);
        var senders = new[] { d.Sender(1), d.Sender(2) };
        using var progress = new ProgressLines(output, () => $"delivered {log.Count}; {senders[0].Stats}; {senders[1].Stats}; {receiver.Stats}");
        try
        {
            await Task.WhenAll(senders.Select(s => Traffic.SendAsync(s, perSender, bound)));
            await reading;
        }
        catch (OperationCanceledException)
        {
            output.WriteLine(await d.DescribeAsync());
            throw;
        }
        output.WriteLine($"delivered {log.Count}; {senders[0].Stats}; {senders[1].Stats}; {receiver.Stats}");
        return new TwoSenderResult(log, senders, receiver);
    }
}
