using System.Collections.Concurrent;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;

namespace SieveQ.Agent.Identity;

/// <summary>
/// The credentials of every open connection, read once when it is accepted (connection middleware),
/// and looked up by each call on it. Also where "who connected" is logged.
/// </summary>
internal sealed class ConnectedPeers
{
    private readonly ConcurrentDictionary<string, PeerCredentials> _byConnection = new(StringComparer.Ordinal);
    private readonly ILogger _log;
    private long _accepted;

    public ConnectedPeers(ILogger log) => _log = log;

    /// <summary>Connections accepted since start: QGuard's accepted-connection rate is derived from it.</summary>
    public long Accepted => Interlocked.Read(ref _accepted);

    /// <summary>Kestrel connection middleware: identify, log, run the connection, forget.</summary>
    public ConnectionDelegate Middleware(ConnectionDelegate next) => async connection =>
    {
        Interlocked.Increment(ref _accepted);
        var socket = connection.Features.Get<IConnectionSocketFeature>()?.Socket;
        var peer = socket is null ? null : PeerCredentials.FromSocket(socket);
        if (peer is null)
        {
            _log.LogInformation("connection {Connection}: caller identity not available on this platform", connection.ConnectionId);
            await next(connection).ConfigureAwait(false);
            return;
        }
        _log.LogInformation("connection {Connection} from pid {Pid} uid {Uid} gid {Gid} exe {Exe}", connection.ConnectionId, peer.Pid, peer.Uid, peer.Gid, peer.Executable ?? "?");
        _byConnection[connection.ConnectionId] = peer;
        try
        {
            await next(connection).ConfigureAwait(false);
        }
        finally
        {
            _byConnection.TryRemove(connection.ConnectionId, out _);
        }
    };

    public PeerCredentials? Of(HttpContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        if (_byConnection.TryGetValue(context.Connection.Id, out var peer))
        {
            return peer;
        }
        var socket = context.Features.Get<IConnectionSocketFeature>()?.Socket;
        return socket is null ? null : PeerCredentials.FromSocket(socket);
    }
}
