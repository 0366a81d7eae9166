using System.Threading.Channels;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Bft.Codec;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Bft.Hosting.Transport;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Tests.Hosting;

public sealed class LinkAuthenticationTests : IAsyncLifetime
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(5);
    private readonly TempCluster _cluster = new(replicas: 4, clients: 2);
    private readonly Channel<BftMessage> _received = Channel.CreateUnbounded<BftMessage>();
    private readonly Channel<Exception> _failures = Channel.CreateUnbounded<Exception>();
    private readonly List<IdentityKey> _keys = [];
    private LinkListener _listener = null!;
    private KeyRing _ring = null!;

    private ClusterConfig Config => _cluster.Config;

    public Task InitializeAsync()
    {
        _ring = new KeyRing(Config);
        _listener = Listen(self: 0, identity: Key(0));
        return Task.CompletedTask;
    }

    private IdentityKey Key(int node)
    {
        var k = ClusterBootstrap.LoadKey(Config, node);
        _keys.Add(k);
        return k;
    }

    private LinkListener Listen(int self, IdentityKey identity)
    {
        var l = new LinkListener(Config.Replica(self).ParseEndpoint(), self, identity, _ring, Config.Links, _ => true, ServeAsync, NullLogger.Instance);
        l.Start();
        return l;
    }

    private async Task ServeAsync(AuthenticatedLink link, CancellationToken ct)
    {
        try
        {
            await link.RunReceiveAsync((m, _) =>
            {
                _received.Writer.TryWrite(m);
                return ValueTask.CompletedTask;
            }, ct);
        }
        catch (Exception e)
        {
            _failures.Writer.TryWrite(e);
            throw;
        }
    }

    private Task<AuthenticatedLink> ConnectAsync(int self, IdentityKey identity, int peer = 0) =>
        AuthenticatedLink.ConnectAsync(Config.Replica(peer).ParseEndpoint(), self, peer, identity, _ring, 5_000, CancellationToken.None);

    private static byte[] Request(int from, long seq) => MessageCodec.Encode(new ClientRequest(from, seq, [1, 2, 3]));

    [Fact]
    public async Task PinnedClientIsAuthenticatedAndItsMessagesArrive()
    {
        await using var link = await ConnectAsync(4, Key(4));
        await link.SendRawForTestAsync(link.SealForTest(Request(4, 1)), CancellationToken.None);
        var m = await _received.Reader.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(new RequestId(4, 1), Assert.IsType<ClientRequest>(m).Id);
    }

    [Fact]
    public async Task ClientWithAnUnpinnedKeyIsRejected()
    {
        var before = TransportCounters.Dropped(DropReason.HandshakeFailed);
        using var impostor = IdentityKey.Generate();
        // The responder answers a failed proof by closing: the initiator never gets a RESPONSE.
        await Assert.ThrowsAnyAsync<IOException>(() => ConnectAsync(4, impostor)).WaitAsync(Wait);
        // The listener closes the socket before it counts the failure, so the initiator may see the close first.
        var deadline = DateTime.UtcNow + Wait;
        while (TransportCounters.Dropped(DropReason.HandshakeFailed) <= before && DateTime.UtcNow < deadline)
        {
            await Task.Delay(10);
        }
        Assert.True(TransportCounters.Dropped(DropReason.HandshakeFailed) > before);
        Assert.False(_received.Reader.TryRead(out _));
    }

    [Fact]
    public async Task A_responder_spends_nothing_but_a_challenge_before_the_initiator_proves_itself()
    {
        var before = TransportCounters.Dropped(DropReason.HandshakeFailed);
        using var socket = new System.Net.Sockets.Socket(System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
        await socket.ConnectAsync(Config.Replica(0).ParseEndpoint());
        await using var stream = new System.Net.Sockets.NetworkStream(socket, ownsSocket: false);

        // A HELLO in client 4's name from someone without its key: ids right, point and nonce made up.
        var hello = new byte[1 + 4 + 4 + 65 + 32];
        hello[0] = 5;  // SQLINK/v3
        System.Buffers.Binary.BinaryPrimitives.WriteInt32LittleEndian(hello.AsSpan(1), 4);
        System.Buffers.Binary.BinaryPrimitives.WriteInt32LittleEndian(hello.AsSpan(5), 0);
        hello[9] = 4;
        Random.Shared.NextBytes(hello.AsSpan(10));
        await stream.WriteAsync(hello);

        // The answer is a bare challenge: the responder's id and a nonce, nothing signed and no key of its own.
        var challenge = new byte[1 + 4 + 32];
        await stream.ReadExactlyAsync(challenge).AsTask().WaitAsync(Wait);
        Assert.Equal(2, challenge[0]);
        Assert.Equal(0, System.Buffers.Binary.BinaryPrimitives.ReadInt32LittleEndian(challenge.AsSpan(1)));

        // A made-up proof: the responder hangs up without sending another byte (no signed answer, before or after).
        var proof = new byte[1 + 64];
        proof[0] = 3;
        Random.Shared.NextBytes(proof.AsSpan(1));
        await stream.WriteAsync(proof);
        var rest = new byte[256];
        Assert.Equal(0, await ReadToEndAsync(stream, rest).WaitAsync(Wait));

        var deadline = DateTime.UtcNow + Wait;
        while (TransportCounters.Dropped(DropReason.HandshakeFailed) <= before && DateTime.UtcNow < deadline)
        {
            await Task.Delay(10);
        }
        Assert.True(TransportCounters.Dropped(DropReason.HandshakeFailed) > before);
    }

    /// <summary>Bytes read until the peer closes (or resets) the connection.</summary>
    private static async Task<int> ReadToEndAsync(Stream stream, byte[] buffer)
    {
        var total = 0;
        try
        {
            int n;
            while ((n = await stream.ReadAsync(buffer.AsMemory(total % buffer.Length))) > 0)
            {
                total += n;
            }
        }
        catch (IOException)
        {
            // reset instead of a clean close: also the end
        }
        return total;
    }

    [Fact]
    public async Task A_SQLINK_v2_hello_is_refused_by_version()
    {
        var before = TransportCounters.Dropped(DropReason.HandshakeFailed);
        using var socket = new System.Net.Sockets.Socket(System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
        await socket.ConnectAsync(Config.Replica(0).ParseEndpoint());
        await using var stream = new System.Net.Sockets.NetworkStream(socket, ownsSocket: false);
        var hello = new byte[1 + 4 + 4 + 65 + 32];
        hello[0] = 1;  // what a v2 node (HMAC frames, cleartext) sends
        System.Buffers.Binary.BinaryPrimitives.WriteInt32LittleEndian(hello.AsSpan(1), 4);
        System.Buffers.Binary.BinaryPrimitives.WriteInt32LittleEndian(hello.AsSpan(5), 0);
        await stream.WriteAsync(hello);
        // No challenge: the responder hangs up at once.
        Assert.Equal(0, await ReadToEndAsync(stream, new byte[64]).WaitAsync(Wait));
        var deadline = DateTime.UtcNow + Wait;
        while (TransportCounters.Dropped(DropReason.HandshakeFailed) <= before && DateTime.UtcNow < deadline)
        {
            await Task.Delay(10);
        }
        Assert.True(TransportCounters.Dropped(DropReason.HandshakeFailed) > before);
    }

    [Fact]
    public async Task PayloadBytesNeverAppearOnTheWire()
    {
        await using var tap = WireTap.Start(Config.Replica(0).ParseEndpoint());
        await using var link = await AuthenticatedLink.ConnectAsync(tap.Endpoint, 4, 0, Key(4), _ring, 5_000, CancellationToken.None);
        var secret = "card 4111111111111111 exp 12/29; plant 3 valve 17 open"u8.ToArray();
        var queue = new SendQueue(maxFrames: 100, maxBytes: 1 << 20);
        using var stop = new CancellationTokenSource();
        var pump = link.RunSendPumpAsync(queue, stop.Token);
        Assert.True(queue.TryEnqueue(OutboundPayload.Encode(new ClientRequest(4, 1, secret))));
        var m = await _received.Reader.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(secret, Assert.IsType<ClientRequest>(m).Payload);

        // What the link wrote, as a tap on the cable sees it: the handshake and one sealed frame.
        var wire = tap.ClientToServer();
        Assert.True(wire.Length > secret.Length + FrameCodec.Overhead);
        for (var i = 0; i + 6 <= secret.Length; i++)
        {
            Assert.True(wire.AsSpan().IndexOf(secret.AsSpan(i, 6)) < 0, $"payload bytes {i}..{i + 6} are readable on the wire");
        }
        await stop.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => pump.WaitAsync(Wait));
    }

    /// <summary>A TCP relay in front of a listener that records what the dialling side writes.</summary>
    private sealed class WireTap : IAsyncDisposable
    {
        private readonly System.Net.Sockets.TcpListener _listener = new(System.Net.IPAddress.Loopback, 0);
        private readonly MemoryStream _clientToServer = new();
        private readonly CancellationTokenSource _stop = new();
        private Task _relay = Task.CompletedTask;

        public System.Net.IPEndPoint Endpoint => (System.Net.IPEndPoint)_listener.LocalEndpoint;

        public static WireTap Start(System.Net.IPEndPoint target)
        {
            var tap = new WireTap();
            tap._listener.Start();
            tap._relay = tap.RelayAsync(target);
            return tap;
        }

        public byte[] ClientToServer()
        {
            lock (_clientToServer)
            {
                return _clientToServer.ToArray();
            }
        }

        private async Task RelayAsync(System.Net.IPEndPoint target)
        {
            using var client = await _listener.AcceptTcpClientAsync(_stop.Token);
            using var server = new System.Net.Sockets.TcpClient();
            await server.ConnectAsync(target, _stop.Token);
            var up = CopyAsync(client.GetStream(), server.GetStream(), _clientToServer);
            var down = CopyAsync(server.GetStream(), client.GetStream(), null);
            await Task.WhenAny(up, down);
        }

        private async Task CopyAsync(Stream from, Stream to, MemoryStream? record)
        {
            var buffer = new byte[16 * 1024];
            try
            {
                int n;
                while ((n = await from.ReadAsync(buffer, _stop.Token)) > 0)
                {
                    if (record is not null)
                    {
                        lock (record)
                        {
                            record.Write(buffer, 0, n);
                        }
                    }
                    await to.WriteAsync(buffer.AsMemory(0, n), _stop.Token);
                }
            }
            catch (Exception e) when (e is IOException or OperationCanceledException or ObjectDisposedException)
            {
                // one side closed: the relay ends
            }
        }

        public async ValueTask DisposeAsync()
        {
            await _stop.CancelAsync();
            _listener.Stop();
            try
            {
                await _relay;
            }
            catch (Exception e) when (e is IOException or OperationCanceledException or ObjectDisposedException or System.Net.Sockets.SocketException)
            {
                // stopped before or while relaying
            }
            _stop.Dispose();
            _clientToServer.Dispose();
        }
    }

    [Fact]
    public async Task ResponderWithTheWrongKeyIsRejectedByTheInitiator()
    {
        // Something listens where replica 1 should be, claiming to be replica 1 but holding replica 0's key.
        await using var fake = Listen(self: 1, identity: Key(0));
        await Assert.ThrowsAsync<LinkAuthenticationException>(() => ConnectAsync(4, Key(4), peer: 1));
    }

    [Fact]
    public async Task TamperedFrameBreaksTheLink()
    {
        await using var link = await ConnectAsync(4, Key(4));
        var frame = link.SealForTest(Request(4, 1));
        frame[^40] ^= 1;  // a payload byte
        await link.SendRawForTestAsync(frame, CancellationToken.None);
        var e = await _failures.Reader.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.IsType<LinkAuthenticationException>(e);
        Assert.False(_received.Reader.TryRead(out _));
    }

    [Fact]
    public async Task ReplayedFrameIsRejected()
    {
        await using var link = await ConnectAsync(4, Key(4));
        var frame = link.SealForTest(Request(4, 1));
        await link.SendRawForTestAsync(frame, CancellationToken.None);
        await link.SendRawForTestAsync(frame, CancellationToken.None);
        await _received.Reader.ReadAsync().AsTask().WaitAsync(Wait);
        var e = await _failures.Reader.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.IsType<LinkAuthenticationException>(e);
        Assert.False(_received.Reader.TryRead(out _));
    }

    [Fact]
    public async Task MessageClaimingAnotherSenderIsDropped()
    {
        var before = TransportCounters.Dropped(DropReason.FromMismatch);
        await using var link = await ConnectAsync(4, Key(4));
        await link.SendRawForTestAsync(link.SealForTest(Request(5, 1)), CancellationToken.None);  // client 4 speaking as client 5
        await link.SendRawForTestAsync(link.SealForTest(Request(4, 2)), CancellationToken.None);
        var m = await _received.Reader.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(4, m.From);
        Assert.True(TransportCounters.Dropped(DropReason.FromMismatch) > before);
    }

    public async Task DisposeAsync()
    {
        await _listener.DisposeAsync();
        _keys.ForEach(k => k.Dispose());
        _cluster.Dispose();
    }
}
