using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using Microsoft.AspNetCore.Connections;

namespace SieveQ.Transport.Hardening;

/// <summary>
/// Kestrel connection middleware bounding the connections one source may hold open, so a single
/// attacker cannot take all of <c>MaxConcurrentConnections</c> (Slowloris holds connections rather
/// than sending). It runs before HTTP/2 starts: a refused connection costs an accept and a close,
/// nothing else. IPv6 sources are counted per /64, the smallest block one subscriber usually gets;
/// counting single IPv6 addresses would give one attacker 2^64 budgets.
/// </summary>
public sealed class SourceConnectionLimiter
{
    private readonly ConcurrentDictionary<IPAddress, int> _open = new();
    private readonly int _maxPerSource;
    private long _refused;

    public SourceConnectionLimiter(int maxPerSource)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(maxPerSource, 1);
        _maxPerSource = maxPerSource;
    }

    public long Refused => Volatile.Read(ref _refused);

    /// <summary>Sources currently holding at least one connection.</summary>
    public int Sources => _open.Count;

    public int OpenFrom(IPAddress address) => _open.TryGetValue(SourceOf(address), out var n) ? n : 0;

    public ConnectionDelegate Wrap(ConnectionDelegate next) => async connection =>
    {
        if (connection.RemoteEndPoint is not IPEndPoint remote)
        {
            // Unix sockets and the like: local by construction, nothing to count.
            await next(connection).ConfigureAwait(false);
            return;
        }
        var source = SourceOf(remote.Address);
        if (!TryEnter(source))
        {
            Interlocked.Increment(ref _refused);
            connection.Abort(new ConnectionAbortedException("too many connections from this source"));
            return;
        }
        try
        {
            await next(connection).ConfigureAwait(false);
        }
        finally
        {
            Exit(source);
        }
    };

    internal bool TryEnter(IPAddress source)
    {
        while (true)
        {
            var n = _open.GetOrAdd(source, 0);
            if (n >= _maxPerSource)
            {
                return false;
            }
            if (_open.TryUpdate(source, n + 1, n))
            {
                return true;
            }
        }
    }

    internal void Exit(IPAddress source)
    {
        while (_open.TryGetValue(source, out var n))
        {
            if (_open.TryUpdate(source, n - 1, n))
            {
                if (n == 1)
                {
                    // Only removes while still zero: a concurrent TryEnter that re-incremented wins.
                    _open.TryRemove(new KeyValuePair<IPAddress, int>(source, 0));
                }
                return;
            }
        }
    }

    internal static IPAddress SourceOf(IPAddress address)
    {
        if (address.IsIPv4MappedToIPv6)
        {
            return address.MapToIPv4();
        }
        if (address.AddressFamily != AddressFamily.InterNetworkV6)
        {
            return address;
        }
        Span<byte> bytes = stackalloc byte[16];
        address.TryWriteBytes(bytes, out _);
        bytes[8..].Clear();
        return new IPAddress(bytes);
    }
}
