namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>
/// A channel's send rate: a token bucket of <c>perMinute</c> tokens, refilled evenly over a minute, on the given
/// clock. A burst of alarms (a whole site going down) goes out at once up to the bucket, then at the rate; what waits
/// stays in the channel's bounded queue.
/// </summary>
internal sealed class AlarmRate(int perMinute, TimeProvider time)
{
    private readonly double _perSecond = perMinute / 60.0;
    private double _tokens = perMinute;
    private DateTimeOffset _at = time.GetUtcNow();

    /// <summary>Waits for a token and takes it. One caller at a time (the channel's one sender loop).</summary>
    public async Task TakeAsync(CancellationToken ct)
    {
        while (true)
        {
            var now = time.GetUtcNow();
            _tokens = Math.Min(perMinute, _tokens + (now - _at).TotalSeconds * _perSecond);
            _at = now;
            if (_tokens >= 1)
            {
                _tokens -= 1;
                return;
            }
            await Task.Delay(TimeSpan.FromSeconds((1 - _tokens) / _perSecond), time, ct).ConfigureAwait(false);
        }
    }
}
