namespace SieveQ.Cli.ConsoleCertificates;

/// <summary>
/// While `up` runs (possibly for months), it looks at the console's certificate every <see cref="Interval"/> and renews
/// it within its renewal window; the console loads the new files itself within 10 s.
/// </summary>
internal sealed class LocalConsoleCertificateRenewal(LocalConsoleCertificate files, TimeProvider time, Action<string> report)
{
    public static readonly TimeSpan Interval = TimeSpan.FromHours(1);

    public async Task RunAsync(CancellationToken ct)
    {
        using var timer = new PeriodicTimer(Interval, time);
        try
        {
            while (await timer.WaitForNextTickAsync(ct).ConfigureAwait(false))
            {
                CheckOnce();
            }
        }
        catch (OperationCanceledException) when (ct.IsCancellationRequested)
        {
            // `up` is stopping
        }
    }

    /// <summary>One look; what changed is reported, a failure too (the current certificate stays and is tried again next hour).</summary>
    public void CheckOnce()
    {
        try
        {
            var state = files.Ensure(time);
            switch (state.Change)
            {
                case LocalCertificateChange.Renewed:
                    report($"console certificate renewed, valid until {state.NotAfter:u} (the console loads it within 10 s)");
                    break;
                case LocalCertificateChange.AuthorityCreated:
                    report($"console CA replaced (the old one was near its end): trust {files.AuthorityCertificateFile} again, SHA-256 {state.AuthorityFingerprint}");
                    break;
                case LocalCertificateChange.Reused:
                    break;
            }
        }
        catch (Exception e) when (e is Deployment.DeploymentException or IOException or UnauthorizedAccessException or System.Security.Cryptography.CryptographicException)
        {
            report($"console certificate not renewed: {e.Message}");
        }
    }
}
