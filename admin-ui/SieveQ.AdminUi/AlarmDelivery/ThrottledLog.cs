namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>
/// At most one warning per <see cref="Interval"/> for one channel's retries and dropped notices: a receiver down for a
/// day must not fill the console's log with one line per try. The lines held back are counted and the next one written
/// says how many. <see cref="Always"/> lines (a notice given up) are not throttled and do not count.
/// </summary>
internal sealed class ThrottledLog(ILogger log, string channel, TimeProvider time)
{
    public static readonly TimeSpan Interval = TimeSpan.FromMinutes(1);

    private readonly Lock _lock = new();
    private DateTimeOffset _last = DateTimeOffset.MinValue;
    private long _held;

    public void Warn(string what)
    {
        long held;
        lock (_lock)
        {
            var now = time.GetUtcNow();
            if (now - _last < Interval)
            {
                _held++;
                return;
            }
            _last = now;
            held = _held;
            _held = 0;
        }
        if (held > 0)
        {
            log.LogWarning("alarm delivery {Channel}: {What} ({Held} similar line(s) held back in the last minute)", channel, what, held);
        }
        else
        {
            Always(what);
        }
    }

    /// <summary>A warning written every time, outside the throttle.</summary>
    public void Always(string what) => log.LogWarning("alarm delivery {Channel}: {What}", channel, what);
}
