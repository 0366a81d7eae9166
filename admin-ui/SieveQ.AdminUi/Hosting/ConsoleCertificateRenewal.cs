using System.Diagnostics.Metrics;

namespace SieveQ.AdminUi.Hosting;

/// <summary>
/// Looks at the console's certificate files every <see cref="Interval"/> and renews the certificate when they changed
/// (<see cref="ConsoleCertificate"/>). Metrics: `sieveq.console.tls_reloads`, `sieveq.console.tls_reload_refusals`, and
/// `sieveq.console.tls_expires_in` (seconds until the current certificate's notAfter, for an expiry alert).
/// </summary>
public sealed partial class ConsoleCertificateRenewal : BackgroundService
{
    public static readonly TimeSpan Interval = TimeSpan.FromSeconds(10);

    private readonly ConsoleCertificate _certificate;
    private readonly TimeProvider _time;
    private readonly ILogger<ConsoleCertificateRenewal> _log;

    public ConsoleCertificateRenewal(ConsoleCertificate certificate, TimeProvider time, IMeterFactory meters, ILogger<ConsoleCertificateRenewal> log)
    {
        ArgumentNullException.ThrowIfNull(meters);
        _certificate = certificate;
        _time = time;
        _log = log;
        var meter = meters.Create(ConsoleMetrics.MeterName);
        meter.CreateObservableCounter("sieveq.console.tls_reloads", () => certificate.Reloads, description: "Renewed TLS certificates the console loaded without a restart.");
        meter.CreateObservableCounter("sieveq.console.tls_reload_refusals", () => certificate.Refusals,
            description: "Changed certificate files the console refused (the current certificate stayed).");
        meter.CreateObservableGauge("sieveq.console.tls_expires_in", () => (long)(certificate.Current.NotAfter.ToUniversalTime() - _time.GetUtcNow().UtcDateTime).TotalSeconds,
            unit: "s", description: "Seconds until the console's TLS certificate expires.");
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        using var timer = new PeriodicTimer(Interval, _time);
        while (await timer.WaitForNextTickAsync(stoppingToken).ConfigureAwait(false))
        {
            Check();
        }
    }

    /// <summary>One look (public so a test need not wait for the timer).</summary>
    public CertificateRenewal Check()
    {
        CertificateRenewal outcome;
        string? problem;
        try
        {
            outcome = _certificate.CheckForRenewal(out problem);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            LogUnreadable(e.Message);
            return CertificateRenewal.Refused;
        }
        if (outcome == CertificateRenewal.Reloaded)
        {
            LogReloaded(_certificate.Fingerprint, _certificate.Current.NotAfter.ToUniversalTime());
        }
        else if (outcome == CertificateRenewal.Refused)
        {
            LogRefused(problem ?? "");
        }
        return outcome;
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "console TLS certificate renewed: SHA-256 {Fingerprint}, valid until {NotAfter:u}")]
    private partial void LogReloaded(string fingerprint, DateTime notAfter);

    [LoggerMessage(Level = LogLevel.Warning, Message = "console TLS certificate files changed but were refused, the current certificate stays: {Problem}")]
    private partial void LogRefused(string problem);

    [LoggerMessage(Level = LogLevel.Warning, Message = "console TLS certificate files could not be looked at: {Problem}")]
    private partial void LogUnreadable(string problem);
}
