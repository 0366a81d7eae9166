using SieveQ.AdminUi.Figures;

namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>
/// Sends the alarm book's changes out: after each refresh (and each acknowledgement) the book's open alarms go through
/// the <see cref="AlarmNoticeTracker"/>, and each notice it finds is offered to every channel's own
/// <see cref="AlarmChannelQueue"/>. Offering never waits, so neither the book's refresh nor an operator's click ever
/// waits on a receiver, and one channel's trouble stays in its queue.
/// </summary>
public sealed class AlarmDispatch : BackgroundService
{
    private readonly AlarmBook _book;
    private readonly IReadOnlyList<IAlarmChannel> _channels;
    private readonly AlarmNoticeTracker _tracker;
    private readonly TimeProvider _time;
    private readonly ILogger<AlarmDispatch> _log;

    public AlarmDispatch(AlarmBook book, AlarmDeliveryConfig? config, IReadOnlyList<IAlarmChannel> channels, TimeProvider time,
        AlarmDeliveryMetrics metrics, ILogger<AlarmDispatch> log)
    {
        ArgumentNullException.ThrowIfNull(channels);
        _channels = channels;
        _book = book;
        _time = time;
        _log = log;
        config ??= new AlarmDeliveryConfig();
        SendsOnAcknowledge = config.SendOnAcknowledge;
        ReminderMinutes = config.ReminderMinutes;
        Console = config.Instance ?? Environment.MachineName;
        _tracker = new AlarmNoticeTracker(config, Console);
        Queues = channels.Select(c => new AlarmChannelQueue(c, config, time, metrics, log)).ToList();
    }

    /// <summary>How notices name this console.</summary>
    public string Console { get; }

    public IReadOnlyList<AlarmChannelQueue> Queues { get; }

    /// <summary>What the alarms page says of when notices go.</summary>
    public bool SendsOnAcknowledge { get; }
    public int ReminderMinutes { get; }

    /// <summary>Offers the notices the book's current open alarms call for (what <see cref="AlarmBook.Updated"/> triggers).</summary>
    public void Observe()
    {
        foreach (var notice in _tracker.Observe(_book.Open, _time.GetUtcNow()))
        {
            Offer(notice);
        }
    }

    /// <summary>An administrator's test alarm, offered to every channel.</summary>
    public void SendTest(string by) => Offer(AlarmNotice.Test(by, _time.GetUtcNow(), Console));

    private void Offer(AlarmNotice notice)
    {
        foreach (var queue in Queues)
        {
            queue.Offer(notice);
        }
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        if (Queues.Count == 0)
        {
            return;
        }
        _book.Updated += OnBookUpdated;
        try
        {
            await Task.WhenAll(Queues.Select(q => q.RunAsync(stoppingToken))).ConfigureAwait(false);
        }
        finally
        {
            _book.Updated -= OnBookUpdated;
        }
    }

    private void OnBookUpdated()
    {
        try
        {
            Observe();
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // Called on the book's refresh: a fault here must not stop the alarms page from updating.
            _log.LogError(e, "alarm delivery: the open alarms could not be turned into notices");
        }
    }

    public override void Dispose()
    {
        // The channels live as long as the console; their connections (a webhook's HTTP pool) go with it.
        foreach (var channel in _channels.OfType<IDisposable>())
        {
            channel.Dispose();
        }
        base.Dispose();
    }
}
