namespace SieveQ.Telemetry;

/// <summary>The scrape listener could not start (its port is taken): the component is refused at start with this message.</summary>
public sealed class TelemetryStartException(string message, Exception? inner = null) : Exception(message, inner);
