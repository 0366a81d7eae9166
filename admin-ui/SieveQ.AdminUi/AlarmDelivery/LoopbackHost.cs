using System.Net;

namespace SieveQ.AdminUi.AlarmDelivery;

/// <summary>Whether a host name or address stays on this machine: the only place a cleartext channel is allowed to reach.</summary>
internal static class LoopbackHost
{
    public static bool Is(string? host) =>
        host is not null && (string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase)
            || IPAddress.TryParse(host.Trim('[', ']'), out var ip) && IPAddress.IsLoopback(ip));
}
