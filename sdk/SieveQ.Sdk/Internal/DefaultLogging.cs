using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Console;

namespace SieveQ.Sdk.Internal;

/// <summary>
/// The logger a sender or receiver uses when the application passes none: warnings and errors on standard error,
/// so a refused frame, a lost connection or a rejected acknowledgement is not silent by default.
/// </summary>
internal static class DefaultLogging
{
    private static readonly Lazy<ILoggerFactory> Factory = new(() => LoggerFactory.Create(b => b
        .SetMinimumLevel(LogLevel.Warning)
        .AddSimpleConsole(o =>
        {
            o.SingleLine = true;
            o.TimestampFormat = "HH:mm:ss.fff ";
        })
        .AddFilter("SieveQ", LogLevel.Warning)
        .Services.Configure<ConsoleLoggerOptions>(o => o.LogToStandardErrorThreshold = LogLevel.Trace)));

    public static ILogger For(string category) => Factory.Value.CreateLogger(category);
}
