using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Crypto;

namespace SieveQ.Bft.Hosting.Transport;

/// <summary>
/// Accepts TCP connections, authenticates each with the responder handshake and hands the link to
/// <c>serve</c>, which owns it until it returns. Handshakes run concurrently and time out, so a peer that
/// connects and stays silent costs a socket for a few seconds, not the accept loop.
/// </summary>
public sealed partial class LinkListener : IAsyncDisposable
{
    private readonly IPEndPoint _endpoint;
    private readonly int _self;
    private readonly IdentityKey _identity;
    private readonly KeyRing _ring;
    private readonly LinkSettings _settings;
    private readonly Func<int, bool> _acceptPeer;
    private readonly Func<AuthenticatedLink, CancellationToken, Task> _serve;
    private readonly ILogger _log;
    private readonly CancellationTokenSource _stop = new();
    private readonly Socket _socket;
    private readonly SemaphoreSlim _handshakes;
    private Task? _acceptLoop;
    private int _active;

    public LinkListener(IPEndPoint endpoint, int self, IdentityKey identity, KeyRing ring, LinkSettings settings, Func<int, bool> acceptPeer, Func<AuthenticatedLink, CancellationToken, Task> serve, ILogger log)
    {
        _endpoint = endpoint;
        _self = self;
        _identity = identity;
        _ring = ring;
        _settings = settings;
        _acceptPeer = acceptPeer;
        _serve = serve;
        _log = log;
        _socket = new Socket(endpoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        _handshakes = new SemaphoreSlim(settings.MaxPendingHandshakes, settings.MaxPendingHandshakes);
    }

    public int ActiveLinks => Volatile.Read(ref _active);

    public IPEndPoint LocalEndpoint => (IPEndPoint)_socket.LocalEndPoint!;

    public void Start()
    {
        _socket.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
        _socket.Bind(_endpoint);
        _socket.Listen(1024);
        _acceptLoop = Task.Run(() => AcceptLoopAsync(_stop.Token));
    }

    private async Task AcceptLoopAsync(CancellationToken ct)
    {
        while (!ct.IsCancellationRequested)
        {
            Socket accepted;
            try
            {
                accepted = await _socket.AcceptAsync(ct).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                return;
            }
            catch (SocketException e)
            {
                LogAcceptFailed(e.Message);
                continue;
            }
            catch (ObjectDisposedException)
            {
                return;
            }
            if (!_handshakes.Wait(0))
            {
                // Too many strangers mid-handshake: refuse rather than queue, so a flood costs sockets, not memory.
                TransportCounters.Drop(DropReason.HandshakeFailed);
                accepted.Dispose();
                continue;
            }
            _ = Task.Run(() => ServeAsync(accepted, ct), CancellationToken.None);
        }
    }

    private async Task ServeAsync(Socket socket, CancellationToken ct)
    {
        AuthenticatedLink link;
        try
        {
            link = await AuthenticatedLink.AcceptAsync(socket, _self, _identity, _ring, _acceptPeer, _settings.HandshakeTimeoutMs, ct).ConfigureAwait(false);
        }
        catch (Exception e) when (e is LinkAuthenticationException or IOException or SocketException or OperationCanceledException or ObjectDisposedException)
        {
            TransportCounters.Drop(DropReason.HandshakeFailed);
            LogHandshakeFailed(e.Message);
            return;
        }
        finally
        {
            _handshakes.Release();
        }
        Interlocked.Increment(ref _active);
        try
        {
            await _serve(link, ct).ConfigureAwait(false);
        }
        catch (Exception e) when (e is LinkAuthenticationException or IOException or SocketException or OperationCanceledException or ObjectDisposedException or Codec.MalformedMessageException)
        {
            if (!ct.IsCancellationRequested)
            {
                LogLinkClosed(link.PeerId, e.Message);
            }
        }
        finally
        {
            Interlocked.Decrement(ref _active);
            await link.DisposeAsync().ConfigureAwait(false);
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        _socket.Dispose();
        if (_acceptLoop is not null)
        {
            await _acceptLoop.ConfigureAwait(false);
        }
        _stop.Dispose();
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "accept failed: {Reason}")]
    private partial void LogAcceptFailed(string reason);

    [LoggerMessage(Level = LogLevel.Warning, Message = "inbound handshake rejected: {Reason}")]
    private partial void LogHandshakeFailed(string reason);

    [LoggerMessage(Level = LogLevel.Information, Message = "inbound link from node {Peer} closed: {Reason}")]
    private partial void LogLinkClosed(int peer, string reason);
}
