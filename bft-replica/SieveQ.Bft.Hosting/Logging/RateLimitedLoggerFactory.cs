using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using Microsoft.Extensions.Logging;

namespace SieveQ.Bft.Hosting.Logging;

/// <summary>
/// Wraps a logger factory so that no one kind of message (category, event id, level) can flood the log: each
/// kind has a token bucket (<see cref="Burst"/> messages, refilled at <see cref="PerSecond"/>); beyond it messages
/// are counted, not written, and the next one written says how many were suppressed. An attacker who makes every
/// refused connection log a warning wrote 4.8 MB of log a minute; now that costs at most the bucket's rate.
/// Kinds are bounded too (<see cref="MaxKinds"/>); further ones share one bucket. Errors and criticals pass.
/// </summary>
public sealed class RateLimitedLoggerFactory : ILoggerFactory
{
    public const int Burst = 20;
    public const double PerSecond = 2;
    public const int MaxKinds = 4_096;

    private static readonly Meter Meter = new("SieveQ.Logging");
    private static readonly Counter<long> SuppressedCounter = Meter.CreateCounter<long>("sieveq.log.suppressed", description: "log messages not written because their kind exceeded its rate");

    private readonly ILoggerFactory _inner;
    private readonly Func<long> _nowMs;
    private readonly ConcurrentDictionary<(string Category, int EventId, LogLevel Level), Bucket> _buckets = new();
    private readonly Bucket _overflow;
    private long _suppressed;

    public RateLimitedLoggerFactory(ILoggerFactory inner, Func<long>? nowMs = null)
    {
        _inner = inner ?? throw new ArgumentNullException(nameof(inner));
        _nowMs = nowMs ?? (() => Environment.TickCount64);
        _overflow = new Bucket(_nowMs());
    }

    /// <summary>Messages suppressed since start, over all kinds.</summary>
    public long Suppressed => Interlocked.Read(ref _suppressed);

    public ILogger CreateLogger(string categoryName) => new RateLimitedLogger(this, categoryName, _inner.CreateLogger(categoryName));

    public void AddProvider(ILoggerProvider provider) => _inner.AddProvider(provider);

    public void Dispose() => _inner.Dispose();

    /// <summary>Whether a message of this kind may be written now, and how many of its kind were suppressed before it.</summary>
    private bool Admit(string category, EventId eventId, LogLevel level, out long suppressedBefore)
    {
        suppressedBefore = 0;
        if (level >= LogLevel.Error)
        {
            return true;
        }
        var key = (category, eventId.Id, level);
        if (!_buckets.TryGetValue(key, out var bucket))
        {
            bucket = _buckets.Count < MaxKinds ? _buckets.GetOrAdd(key, _ => new Bucket(_nowMs())) : _overflow;
        }
        if (bucket.TryTake(_nowMs(), out suppressedBefore))
        {
            return true;
        }
        Interlocked.Increment(ref _suppressed);
        SuppressedCounter.Add(1);
        return false;
    }

    private sealed class Bucket(long nowMs)
    {
        private readonly Lock _lock = new();
        private double _tokens = Burst;
        private long _at = nowMs;
        private long _suppressed;

        public bool TryTake(long nowMs, out long suppressedBefore)
        {
            lock (_lock)
            {
                _tokens = Math.Min(Burst, _tokens + ((nowMs - _at) * PerSecond / 1000.0));
                _at = nowMs;
                if (_tokens >= 1)
                {
                    _tokens -= 1;
                    suppressedBefore = _suppressed;
                    _suppressed = 0;
                    return true;
                }
                _suppressed++;
                suppressedBefore = 0;
                return false;
            }
        }
    }

    private sealed class RateLimitedLogger(RateLimitedLoggerFactory owner, string category, ILogger inner) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => inner.BeginScope(state);

        public bool IsEnabled(LogLevel logLevel) => inner.IsEnabled(logLevel);

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (!inner.IsEnabled(logLevel) || !owner.Admit(category, eventId, logLevel, out var suppressedBefore))
            {
                return;
            }
            if (suppressedBefore > 0)
            {
                inner.Log(logLevel, eventId, $"({suppressedBefore} more messages like the next one were suppressed: over {PerSecond}/s)", null, (s, _) => s);
            }
            inner.Log(logLevel, eventId, state, exception, formatter);
        }
    }
}
