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

    /// <summary>Kestrel connection middleware: identify, log, run the connection, forget. An unidentified connection runs on; its calls are refused.</summary>
    public ConnectionDelegate Middleware(ConnectionDelegate next) => async connection =>
    {
        Interlocked.Increment(ref _accepted);
        var peer = Identify(connection);
        if (peer is null)
        {
            await next(connection).ConfigureAwait(false);
            return;
        }
        if (peer.UserSid is null)
        {
            _log.LogInformation("connection {Connection} from pid {Pid} uid {Uid} gid {Gid} exe {Exe}", connection.ConnectionId, peer.Pid, peer.Uid, peer.Gid, peer.Executable ?? "?");
        }
        else
        {
            _log.LogInformation("connection {Connection} from pid {Pid} sid {Sid} exe {Exe}", connection.ConnectionId, peer.Pid, peer.UserSid, peer.Executable ?? "?");
        }
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

    /// <summary>The kernel's word on the peer: SO_PEERCRED on a Unix socket, the client process on a named pipe; null (logged why) when neither gives one.</summary>
    private PeerCredentials? Identify(ConnectionContext connection)
    {
        var socket = connection.Features.Get<IConnectionSocketFeature>()?.Socket;
        if (socket is not null)
        {
            var fromSocket = PeerCredentials.FromSocket(socket);
            if (fromSocket is null)
            {
                _log.LogWarning("connection {Connection}: the socket gives no caller identity; its calls are refused", connection.ConnectionId);
            }
            return fromSocket;
        }
        var pipe = connection.Features.Get<IConnectionNamedPipeFeature>()?.NamedPipe;
        if (pipe is not null && OperatingSystem.IsWindows())
        {
            try
            {
                return NamedPipeCaller.Identify(pipe);
            }
            catch (Exception e) when (e is System.ComponentModel.Win32Exception or InvalidOperationException or UnauthorizedAccessException or System.Security.SecurityException)
            {
                _log.LogWarning("connection {Connection}: the pipe client cannot be identified ({Reason}); its calls are refused", connection.ConnectionId, e.Message);
                return null;
            }
        }
        _log.LogWarning("connection {Connection}: no socket or named pipe to read the caller from; its calls are refused", connection.ConnectionId);
        return null;
    }

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
