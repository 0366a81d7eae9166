using System.Net.Sockets;
using System.Text;

namespace SieveQ.Agent.Hosting;

/// <summary>
/// systemd's readiness protocol (sd_notify) without libsystemd: datagrams such as <c>READY=1</c> to the
/// socket named by <c>$NOTIFY_SOCKET</c> (a leading '@' means the abstract namespace). Does nothing when
/// not started by systemd. Microsoft.Extensions.Hosting.Systemd (UseSystemd) would do the same, but it
/// is not in the package registry this project builds from.
/// </summary>
public sealed class SystemdNotifier
{
    private readonly string? _socket;

    public SystemdNotifier(string? notifySocket) => _socket = string.IsNullOrEmpty(notifySocket) ? null : notifySocket;

    public static SystemdNotifier FromEnvironment() => new(Environment.GetEnvironmentVariable("NOTIFY_SOCKET"));

    public bool IsActive => _socket is not null;

    /// <summary>From <c>$WATCHDOG_USEC</c>: how often systemd expects <c>WATCHDOG=1</c> (null: no watchdog).</summary>
    public static TimeSpan? WatchdogInterval =>
        long.TryParse(Environment.GetEnvironmentVariable("WATCHDOG_USEC"), out var usec) && usec > 0 ? TimeSpan.FromMicroseconds(usec) : null;

    public void Ready(string status) => Notify($"READY=1\nSTATUS={status}");

    public void Stopping() => Notify("STOPPING=1");

    public void Watchdog() => Notify("WATCHDOG=1");

    /// <summary>Sends one state datagram; false when there is no systemd or it did not take it (never fatal).</summary>
    public bool Notify(string state)
    {
        if (_socket is null || OperatingSystem.IsWindows())
        {
            return false;
        }
        var path = _socket[0] == '@' ? "\0" + _socket[1..] : _socket;
        try
        {
            using var s = new Socket(AddressFamily.Unix, SocketType.Dgram, ProtocolType.Unspecified);
            s.Connect(new UnixDomainSocketEndPoint(path));
            s.Send(Encoding.UTF8.GetBytes(state));
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
