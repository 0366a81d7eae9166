using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using SieveQ.Deployment;

namespace SieveQ.AdminUi.Hosting;

/// <summary>What one look at the certificate files found.</summary>
public enum CertificateRenewal
{
    Unchanged,
    Reloaded,
    Refused,
}

/// <summary>
/// The certificate an https:// console presents, renewed without a restart: when the files console.json names change
/// (size, write time, or content when written within seconds of the last look, of the certificate, key or password
/// file), they are loaded and checked as at start
/// (<see cref="ConsoleTls.LoadCertificate"/>), and new handshakes get the new certificate; connections already open keep
/// theirs. A renewal that fails its checks (a half-written pair, an expired or keyless certificate) leaves the current
/// certificate in place and is tried again only when the files change again.
/// </summary>
public sealed class ConsoleCertificate : IDisposable
{
    private readonly ConsoleConfig _config;
    private readonly DeploymentConfig _deployment;
    private const long MaxHashedBytes = 1024 * 1024;

    private readonly TimeProvider _time;
    private readonly Lock _lock = new();
    private X509Certificate2 _current;
    private X509Certificate2? _previous;
    private readonly FileChangeStamp[] _stamps;
    private long _reloads;
    private long _refusals;

    private ConsoleCertificate(ConsoleConfig config, DeploymentConfig deployment, TimeProvider time, X509Certificate2 certificate)
    {
        _config = config;
        _deployment = deployment;
        _time = time;
        var tls = config.Tls!;
        _stamps = new[] { tls.CertificateFile, tls.KeyFile, tls.PasswordFile }.OfType<string>()
            .Select(f => new FileChangeStamp(deployment.Resolve(f), MaxHashedBytes)).ToArray();
        _current = certificate;
    }

    /// <summary>The certificate of an https:// console (checked now, as at start), null for http://.</summary>
    /// <exception cref="DeploymentException">As <see cref="ConsoleTls.LoadCertificate"/>.</exception>
    public static ConsoleCertificate? Load(ConsoleConfig config, DeploymentConfig deployment, TimeProvider time) =>
        ConsoleTls.LoadCertificate(config, deployment, time) is { } certificate ? new ConsoleCertificate(config, deployment, time, certificate) : null;

    /// <summary>The certificate new handshakes get.</summary>
    public X509Certificate2 Current => Volatile.Read(ref _current);

    public long Reloads => Interlocked.Read(ref _reloads);

    public long Refusals => Interlocked.Read(ref _refusals);

    /// <summary>Loads the files if they changed since the last look; <paramref name="problem"/> says why a change was refused.</summary>
    public CertificateRenewal CheckForRenewal(out string? problem)
    {
        problem = null;
        lock (_lock)
        {
            if (!_stamps.Any(s => s.Changed()))
            {
                return CertificateRenewal.Unchanged;
            }
            foreach (var s in _stamps)
            {
                s.Take();
            }
            X509Certificate2 renewed;
            try
            {
                renewed = ConsoleTls.LoadCertificate(_config, _deployment, _time)!;
            }
            catch (DeploymentException e)
            {
                Interlocked.Increment(ref _refusals);
                problem = e.Message;
                return CertificateRenewal.Refused;
            }
            // The one before the previous is no longer handed to any handshake; the previous may still be, for a moment.
            _previous?.Dispose();
            _previous = _current;
            Volatile.Write(ref _current, renewed);
            Interlocked.Increment(ref _reloads);
            return CertificateRenewal.Reloaded;
        }
    }

    /// <summary>SHA-256 fingerprint of the current certificate, as `init-tls` prints it.</summary>
    public string Fingerprint => Current.GetCertHashString(HashAlgorithmName.SHA256);

    public void Dispose()
    {
        _previous?.Dispose();
        _current.Dispose();
    }
}
