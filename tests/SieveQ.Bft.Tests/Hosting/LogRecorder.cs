using Microsoft.Extensions.Logging;

namespace SieveQ.Bft.Tests.Hosting;

/// <summary>Every log line written through it, in order, from any thread.</summary>
internal sealed class LogRecorder : ILoggerProvider, ILogger
{
    private readonly List<(LogLevel Level, string Text)> _lines = [];

    public IReadOnlyList<(LogLevel Level, string Text)> Lines
    {
        get
        {
            lock (_lines)
            {
                return [.. _lines];
            }
        }
    }

    public ILogger CreateLogger(string categoryName) => this;
    public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;
    public bool IsEnabled(LogLevel logLevel) => true;

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
    {
        lock (_lines)
        {
            _lines.Add((logLevel, formatter(state, exception)));
        }
    }

    public void Dispose()
    {
    }
}
