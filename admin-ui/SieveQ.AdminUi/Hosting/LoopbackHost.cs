using System.Net;

namespace SieveQ.AdminUi.Hosting;

/// <summary>Whether a host name or address stays on this machine: the only place a cleartext connection is allowed to reach.</summary>
internal static class LoopbackHost
{
    public static bool Is(string? host) =>
        host is not null && (string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase)
            || IPAddress.TryParse(host.Trim('[', ']'), out var ip) && IPAddress.IsLoopback(ip));

    /// <summary>The URL's host is loopback, by <see cref="Uri.IsLoopback"/> or by <see cref="Is(string?)"/>.</summary>
    public static bool Is(Uri url) => url.IsLoopback || Is(url.Host);
}
