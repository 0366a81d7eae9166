using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.Logging;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Bft.Protocol;
using SieveQ.Transport.Reconnect;

namespace SieveQ.Bft.Hosting.Transport;

/// <summary>
/// Keeps one outbound authenticated connection to a peer alive: dials, runs the send pump (and, for
/// clients, the receive loop), and redials with bounded exponential backoff when the connection fails.
/// The send queue survives reconnects.
/// </summary>
public sealed partial class PeerConnector : IAsyncDisposable
{
    private readonly IPEndPoint _endpoint;
    private readonly int _self;
    private readonly IdentityKey _identity;
    private readonly KeyRing _ring;
    private readonly LinkSettings _settings;
    private readonly Func<BftMessage, int, ValueTask>? _onMessage;
    private readonly ILogger _log;
    private readonly ReconnectBackoff _backoff;
    private readonly CancellationTokenSource _stop = new();
    private Task? _run;
    private volatile bool _connected;

    public PeerConnector(IPEndPoint endpoint, int self, int peer, IdentityKey identity, KeyRing ring, LinkSettings settings, Func<BftMessage, int, ValueTask>? onMessage, ILogger log)
    {
        _endpoint = endpoint;
        _self = self;
        PeerId = peer;
        _identity = identity;
        _ring = ring;
        _settings = settings;
        _onMessage = onMessage;
        _log = log;
        // No jitter: a node redials a few known peers, not a crowd of clients. Made here, so bad link settings fail at start.
        _backoff = new ReconnectBackoff(TimeSpan.FromMilliseconds(settings.ReconnectMinMs), TimeSpan.FromMilliseconds(settings.ReconnectMaxMs), BackoffJitter.None);
        Queue = new SendQueue(settings.SendQueueFrames, settings.SendQueueBytes);
    }

    public int PeerId { get; }
    public SendQueue Queue { get; }
    public bool IsConnected => _connected;
    public long Connections { get; private set; }

    public void Start() => _run ??= Task.Run(() => RunAsync(_stop.Token));

    private async Task RunAsync(CancellationToken ct)
    {
        while (!ct.IsCancellationRequested)
        {
            AuthenticatedLink? link = null;
            try
            {
                link = await AuthenticatedLink.ConnectAsync(_endpoint, _self, PeerId, _identity, _ring, _settings.HandshakeTimeoutMs, ct).ConfigureAwait(false);
                _connected = true;
                Connections++;
                _backoff.Reset();
                LogConnected(PeerId, _endpoint);
                using var session = CancellationTokenSource.CreateLinkedTokenSource(ct);
                var send = link.RunSendPumpAsync(Queue, session.Token);
                var receive = link.RunReceiveAsync(_onMessage ?? UnexpectedAsync, session.Token);
                var first = await Task.WhenAny(send, receive).ConfigureAwait(false);
                await session.CancelAsync().ConfigureAwait(false);
                await link.DisposeAsync().ConfigureAwait(false);
                link = null;
                await Task.WhenAll(send, receive).ContinueWith(static _ => { }, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default).ConfigureAwait(false);
                if (first.IsFaulted && !ct.IsCancellationRequested)
                {
                    LogLinkLost(PeerId, first.Exception?.GetBaseException().Message ?? "?");
                }
            }
            catch (OperationCanceledException) when (ct.IsCancellationRequested)
            {
                break;
            }
            catch (Exception e) when (e is SocketException or IOException or LinkAuthenticationException or OperationCanceledException or ObjectDisposedException)
            {
                if (e is LinkAuthenticationException)
                {
                    TransportCounters.Drop(DropReason.HandshakeFailed);
                    LogHandshakeFailed(PeerId, e.Message);
                }
            }
            finally
            {
                _connected = false;
                if (link is not null)
                {
                    await link.DisposeAsync().ConfigureAwait(false);
                }
            }
            if (!await _backoff.WaitAsync(ct).ConfigureAwait(false))
            {
                break;
            }
        }
    }

    private static ValueTask UnexpectedAsync(BftMessage message, int bytes)
    {
        TransportCounters.Drop(DropReason.UnexpectedType);
        return ValueTask.CompletedTask;
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        Queue.Complete();
        if (_run is not null)
        {
            try
            {
                await _run.ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                // stopping
            }
        }
        _stop.Dispose();
    }

    [LoggerMessage(Level = LogLevel.Debug, Message = "link to node {Peer} at {Endpoint} up")]
    private partial void LogConnected(int peer, IPEndPoint endpoint);

    [LoggerMessage(Level = LogLevel.Information, Message = "link to node {Peer} lost: {Reason}")]
    private partial void LogLinkLost(int peer, string reason);

    [LoggerMessage(Level = LogLevel.Warning, Message = "handshake with node {Peer} failed: {Reason}")]
    private partial void LogHandshakeFailed(int peer, string reason);
}
