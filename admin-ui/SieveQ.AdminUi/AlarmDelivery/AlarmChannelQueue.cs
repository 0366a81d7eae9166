using System.Threading.Channels;

namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>
/// One channel's bounded queue and the one loop that empties it: takes a token of the channel's rate, then tries the
/// notice up to <see cref="AlarmDeliveryConfig.MaxAttempts"/> times, each try cancelled at
/// <see cref="AlarmDeliveryConfig.RequestTimeoutSeconds"/>, waiting between tries with exponential back-off and
/// jitter. <see cref="Offer"/> never waits: a full queue drops (oldest or newest, as configured) and counts, so a
/// dead receiver costs the console a bounded queue and nothing else, and the other channels never notice.
/// </summary>
public sealed class AlarmChannelQueue
{
    private readonly IAlarmChannel _channel;
    private readonly AlarmDeliveryConfig _config;
    private readonly TimeProvider _time;
    private readonly AlarmDeliveryMetrics _metrics;
    private readonly ThrottledLog _log;
    private readonly Channel<AlarmNotice> _queue;
    private readonly KeyValuePair<string, object?> _tag;
    private long _sent, _failed, _dropped, _retries, _attempts;

    public AlarmChannelQueue(IAlarmChannel channel, AlarmDeliveryConfig config, TimeProvider time, AlarmDeliveryMetrics metrics, ILogger log)
    {
        ArgumentNullException.ThrowIfNull(channel);
        ArgumentNullException.ThrowIfNull(config);
        ArgumentNullException.ThrowIfNull(metrics);
        _channel = channel;
        _config = config;
        _time = time;
        _metrics = metrics;
        _tag = new("channel", channel.Name);
        _log = new ThrottledLog(log, channel.Name, time);
        _queue = Channel.CreateBounded<AlarmNotice>(new BoundedChannelOptions(config.QueueCapacity)
        {
            FullMode = config.WhenQueueFull == AlarmQueueFullPolicy.DropOldest ? BoundedChannelFullMode.DropOldest : BoundedChannelFullMode.DropWrite,
            SingleReader = true,
        }, Dropped);
        metrics.Watch(channel.Name, () => Depth);
    }

    public string Name => _channel.Name;

    /// <summary>Notices waiting (the one being tried is not counted).</summary>
    public int Depth => _queue.Reader.Count;

    public long Sent => Interlocked.Read(ref _sent);
    public long Failed => Interlocked.Read(ref _failed);
    public long DroppedCount => Interlocked.Read(ref _dropped);
    public long Retries => Interlocked.Read(ref _retries);
    /// <summary>Tries begun, retries included.</summary>
    public long Attempts => Interlocked.Read(ref _attempts);

    /// <summary>Queues the notice without waiting; when the queue is full one notice is dropped and counted.</summary>
    public void Offer(AlarmNotice notice) => _queue.Writer.TryWrite(notice);

    /// <summary>The sender loop, until <paramref name="ct"/> is cancelled (the console stops).</summary>
    public async Task RunAsync(CancellationToken ct)
    {
        var rate = new AlarmRate(_config.MaxPerMinute, _time);
        try
        {
            await foreach (var notice in _queue.Reader.ReadAllAsync(ct).ConfigureAwait(false))
            {
                await rate.TakeAsync(ct).ConfigureAwait(false);
                await DeliverAsync(notice, ct).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (ct.IsCancellationRequested)
        {
            // Stopping: what is queued is not sent (the alarms are still in the journal and on the page).
        }
        finally
        {
            _metrics.Unwatch(_channel.Name);
        }
    }

    private async Task DeliverAsync(AlarmNotice notice, CancellationToken ct)
    {
        for (var attempt = 1; ; attempt++)
        {
            Interlocked.Increment(ref _attempts);
            string problem;
            try
            {
                using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(_config.RequestTimeoutSeconds), _time);
                using var linked = CancellationTokenSource.CreateLinkedTokenSource(ct, timeout.Token);
                await _channel.SendAsync(notice, linked.Token).ConfigureAwait(false);
                Interlocked.Increment(ref _sent);
                _metrics.Sent.Add(1, _tag);
                return;
            }
            catch (AlarmNoticeRefusedException e)
            {
                GiveUp(notice, $"refused for good: {e.Message}");
                return;
            }
            catch (OperationCanceledException) when (!ct.IsCancellationRequested)
            {
                problem = $"no answer within {_config.RequestTimeoutSeconds} s";
            }
            catch (Exception e) when (e is not OperationCanceledException and not OutOfMemoryException)
            {
                // Whatever the protocol library throws (network, TLS, protocol): a failed try; the loop must outlive it.
                problem = Describe(e);
            }
            if (attempt >= _config.MaxAttempts)
            {
                GiveUp(notice, $"{attempt} tries failed, the last: {problem}");
                return;
            }
            Interlocked.Increment(ref _retries);
            _metrics.Retries.Add(1, _tag);
            _log.Warn($"try {attempt} of {_config.MaxAttempts} for {notice.State} {notice.Alarm.Key} failed ({problem}); trying again");
            await Task.Delay(Backoff(attempt), _time, ct).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// The wait after failed try <paramref name="attempt"/>: the first delay doubled per try, capped, then a random
    /// point in its upper half, so consoles that failed together do not all retry together.
    /// </summary>
    internal TimeSpan Backoff(int attempt)
    {
        var full = TimeSpan.FromSeconds(_config.RetryFirstDelaySeconds * Math.Pow(2, Math.Min(attempt - 1, 20)));
        if (full > AlarmDeliveryConfig.MaxRetryDelay)
        {
            full = AlarmDeliveryConfig.MaxRetryDelay;
        }
        return full / 2 + full / 2 * Random.Shared.NextDouble();
    }

    private void GiveUp(AlarmNotice notice, string why)
    {
        Interlocked.Increment(ref _failed);
        _metrics.Failed.Add(1, _tag);
        // Not throttled: a lost notice is always logged (already bounded by the channel's rate and its tries).
        _log.Always($"{notice.State} {notice.Alarm.Key} (event {notice.EventId}) not delivered: {why}");
    }

    /// <summary>The exception's message and its causes' (an HttpRequestException's socket or TLS error), outermost first.</summary>
    internal static string Describe(Exception e)
    {
        var messages = new List<string>();
        for (Exception? x = e; x is not null; x = x.InnerException)
        {
            if (!messages.Contains(x.Message, StringComparer.Ordinal))
            {
                messages.Add(x.Message);
            }
        }
        return string.Join(": ", messages);
    }

    private void Dropped(AlarmNotice notice)
    {
        Interlocked.Increment(ref _dropped);
        _metrics.Dropped.Add(1, _tag);
        _log.Warn($"queue full ({_config.QueueCapacity}): {notice.State} {notice.Alarm.Key} dropped ({_config.WhenQueueFull})");
    }
}
