// The SieveQ SDK as an application uses it: one sender and one receiver of its own, a refused send, and a
// deployment that may restart while it sends. Usage: SieveQ.Sdk.Sample [settings.json] (sample.example.json
// shows every setting). Exit code 0 when every message arrived in order and exactly once.
using System.Globalization;
using SieveQ.Sdk;
using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Sample;
using SieveQ.Sdk.Sender;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Sender.Outbox;

SampleSettings settings;
SieveQClientConfiguration clients;
try
{
    settings = SampleSettings.Load(args.Length > 0 ? args[0] : "sample.json");
    clients = settings.ToClientConfiguration();
}
catch (Exception e) when (e is IOException or InvalidDataException or UnauthorizedAccessException or FormatException or ArgumentException)
{
    Console.Error.WriteLine($"error: {e.Message}");
    return 2;
}

var identity = settings.Identity;
var run = settings.Run;
var stateDir = settings.Resolve(identity.StateDirectory);
Directory.CreateDirectory(stateDir);
using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(run.TimeoutSeconds));
using var ctrlC = new CtrlC(timeout);
var ct = timeout.Token;

SieveQReceiver receiver;
Sending sending;
try
{
    // ConnectAsync asks the running deployment (f+1 replica-SQs) whether this application's ids are enrolled with the
    // keys it holds. When the deployment cannot answer, Create starts from the settings' enrolment instead: the
    // sender's outbox keeps what it accepts until the deployment returns.
    try
    {
        receiver = await SieveQReceiver.ConnectAsync(clients, identity.ReceiverId, stateDir, ct: ct).ConfigureAwait(false);
        sending = new Sending(clients, identity.SenderId, stateDir,
            await SieveQSender.ConnectAsync(clients, identity.SenderId, stateDir, ct: ct).ConfigureAwait(false));
        Console.WriteLine($"connected: sender {identity.SenderId} and receiver {identity.ReceiverId} are enrolled in the running deployment");
    }
    catch (ConnectUnconfirmedException e)
    {
        Console.WriteLine($"not confirmed ({e.Message}); starting from the settings' enrolment");
        receiver = SieveQReceiver.Create(clients, identity.ReceiverId, stateDir);
        sending = new Sending(clients, identity.SenderId, stateDir, SieveQSender.Create(clients, identity.SenderId, stateDir));
    }
}
catch (Exception e) when (e is SieveQConfigurationException or KeyStoreException or OutboxCorruptException)
{
    // Not enrolled, keys missing or not the enrolled ones, a damaged outbox: nothing would get through.
    Console.Error.WriteLine($"error: {e.GetType().Name}: {e.Message}");
    return 1;
}

await using (receiver.ConfigureAwait(false))
await using (sending.ConfigureAwait(false))
{
    var sender = sending.Current;
    var runId = Guid.NewGuid().ToString("N")[..12];
    Console.WriteLine($"sender {sender.Id} -> receiver {receiver.Id}, run {runId}, {run.Messages} messages; state in {stateDir}");
    if (sender.Stats.OutboxPending > 0)
    {
        Console.WriteLine($"outbox: {sender.Stats.OutboxPending} messages of an earlier run are sent again first");
    }

    await Refusals.ShowAsync(sending.Current, identity.ReceiverId, settings.Deployment.Routes).ConfigureAwait(false);

    var inbox = new OrderedInbox(runId, sender.Id, run.Messages);
    var receiving = inbox.RunAsync(receiver, ct);
    using var progress = new ProgressLine(sending, inbox);
    try
    {
        var half = run.Messages / 2;
        var last = 0L;
        for (var i = 0; i < half; i++)
        {
            last = await sending.SendAsync(identity.ReceiverId, OrderedInbox.Payload(runId, i), ct).ConfigureAwait(false);
        }
        await sending.WaitAcknowledgedAsync(last, ct).ConfigureAwait(false);
        await Task.WhenAny(inbox.WaitForAsync(half, ct), receiving).Unwrap().ConfigureAwait(false);
        Console.WriteLine($"phase 1: {half} sent, acknowledged and received in order");

        Console.WriteLine($"phase 2: sending {run.Messages - half} more, {run.IntervalMilliseconds} ms apart; a deployment restart now is survived");
        for (var i = half; i < run.Messages; i++)
        {
            last = await sending.SendAsync(identity.ReceiverId, OrderedInbox.Payload(runId, i), ct).ConfigureAwait(false);
            await Task.Delay(run.IntervalMilliseconds, ct).ConfigureAwait(false);
        }
        Console.WriteLine($"phase 2: all {run.Messages - half} accepted (in the outbox until acknowledged)");
        await sending.WaitAcknowledgedAsync(last, ct).ConfigureAwait(false);
        await receiving.ConfigureAwait(false);
    }
    catch (OperationCanceledException) when (timeout.IsCancellationRequested)
    {
        Console.Error.WriteLine($"error: stopped after {run.TimeoutSeconds} s or Ctrl-C: {progress.Describe()}");
        return 1;
    }
    catch (InvalidDataException e)
    {
        Console.Error.WriteLine($"error: delivery broke its promise: {e.Message}");
        return 1;
    }
    var s = sending.Current.Stats;
    Console.WriteLine($"done: {run.Messages} sent, {inbox.Received} received in order, exactly once"
        + $" ({inbox.FromEarlierRuns} from earlier runs; {sending.Reconnects} reconnects, {s.Retransmissions} retransmissions,"
        + $" sender replaced {sending.Recreated} times, outbox {s.OutboxPending} pending)");
}
return 0;
