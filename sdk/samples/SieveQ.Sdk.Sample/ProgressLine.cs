using SieveQ.Sdk.Sender;

namespace SieveQ.Sdk.Sample;

/// <summary>A line every two seconds while something changes: what was sent, acknowledged, received, and is in the outbox.</summary>
internal sealed class ProgressLine : IDisposable
{
    private readonly SieveQSender _sender;
    private readonly OrderedInbox _inbox;
    private readonly Timer _timer;
    private string _last = "";

    public ProgressLine(SieveQSender sender, OrderedInbox inbox)
    {
        _sender = sender;
        _inbox = inbox;
        _timer = new Timer(_ => Print(), null, TimeSpan.FromSeconds(2), TimeSpan.FromSeconds(2));
    }

    public string Describe()
    {
        var s = _sender.Stats;
        return $"sent up to {s.LastSeq}, acknowledged up to {s.AcknowledgedUpTo}, received {_inbox.Received}, outbox {s.OutboxPending} pending, {s.Reconnects} reconnects";
    }

    private void Print()
    {
        var line = Describe();
        if (line != _last)
        {
            _last = line;
            Console.WriteLine($"progress: {line}");
        }
    }

    public void Dispose() => _timer.Dispose();
}
