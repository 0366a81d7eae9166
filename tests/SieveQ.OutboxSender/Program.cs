using System.Globalization;
using SieveQ.Agent.Hosting;
using SieveQ.Deployment;
using SieveQ.Sdk.Sender;

// Usage: SieveQ.OutboxSender <deployment dir> <sender id> <state dir> <receiver id> <first index> <count> [delay ms per message]
// Sends messages first..first+count-1 (the payload names its index), printing "accepted <index> <seq>" once SendAsync
// returned, i.e. once the message is in the durable outbox; then waits for every one to be acknowledged and prints
// "acknowledged <seq>". A test kills it with SIGKILL at any point and starts it again on the same state folder.
if (args.Length < 6)
{
    await Console.Error.WriteLineAsync("usage: <deployment dir> <sender id> <state dir> <receiver id> <first index> <count> [delay ms]");
    return 2;
}
var inv = CultureInfo.InvariantCulture;
var deployment = args[0];
var senderId = int.Parse(args[1], inv);
var stateDir = args[2];
var receiver = int.Parse(args[3], inv);
var first = int.Parse(args[4], inv);
var count = int.Parse(args[5], inv);
var delayMs = args.Length > 6 ? int.Parse(args[6], inv) : 0;

var config = DeploymentContext.Load(deployment).ToClientConfiguration();
await using var sender = SieveQSender.Create(config, senderId, stateDir, new SieveQSenderOptions { UnavailableAfter = Timeout.InfiniteTimeSpan });
Console.Out.WriteLine(string.Create(inv, $"started {sender.Stats.OutboxPending}"));
Console.Out.Flush();
for (var i = first; i < first + count; i++)
{
    var seq = (await sender.SendAsync(receiver, OutboxPayload.For(i))).Seq;
    Console.Out.WriteLine(string.Create(inv, $"accepted {i} {seq}"));
    Console.Out.Flush();
    if (delayMs > 0)
    {
        await Task.Delay(delayMs);
    }
}
await sender.WaitAcknowledgedAsync(sender.LastSeq);
Console.Out.WriteLine(string.Create(inv, $"acknowledged {sender.LastSeq}"));
Console.Out.Flush();
return 0;

/// <summary>The bytes message <c>index</c> carries; the test recomputes them to check what was delivered.</summary>
internal static class OutboxPayload
{
    public static byte[] For(int index) => System.Text.Encoding.UTF8.GetBytes(string.Create(CultureInfo.InvariantCulture, $"outbox message {index} ").PadRight(200, '.'));
}
