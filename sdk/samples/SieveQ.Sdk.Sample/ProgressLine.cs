namespace SieveQ.Sdk.Sample;

/// <summary>A line every two seconds while something changes: what was sent, acknowledged, received, and is in the outbox.</summary>
internal sealed class ProgressLine : IDisposable
{
    private readonly Sending _sending;
    private readonly OrderedInbox _inbox;
    private readonly Timer _timer;
    private string _last = "";

    public ProgressLine(Sending sending, OrderedInbox inbox)
    {
        _sending = sending;
        _inbox = inbox;
        _timer = new Timer(_ => Print(), null, TimeSpan.FromSeconds(2), TimeSpan.FromSeconds(2));
    }

    public string Describe()
    {
        var s = _sending.Current.Stats;
        return $"sent up to {s.LastSeq}, acknowledged up to {s.AcknowledgedUpTo}, received {_inbox.Received}, outbox {s.OutboxPending} pending, {_sending.Reconnects} reconnects";
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
