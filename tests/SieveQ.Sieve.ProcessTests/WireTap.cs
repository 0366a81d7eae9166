using System.Net;
using System.Net.Sockets;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// A loopback TCP relay the test owns, put between a client and one component's gRPC port: it forwards every byte
/// both ways and keeps a copy of them (up to a bound; beyond it the relay stops copying and says so), so a test can
/// look for what an eavesdropper on the link would see.
/// </summary>
internal sealed class WireTap : IAsyncDisposable
{
    private const int MaxRecordedBytes = 256 * 1024 * 1024;
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly IPEndPoint _target;
    private readonly CancellationTokenSource _stop = new();
    private readonly MemoryStream _recorded = new();
    private readonly List<Task> _pumps = [];
    private readonly Task _accepting;

    public WireTap(Uri target)
    {
        _target = new IPEndPoint(IPAddress.Parse(target.Host), target.Port);
        _listener.Start();
        Address = new UriBuilder(target) { Port = ((IPEndPoint)_listener.LocalEndpoint).Port }.Uri;
        _accepting = Task.Run(AcceptAsync);
    }

    /// <summary>The target's URL with the relay's port: give this to the client.</summary>
    public Uri Address { get; }

    public bool Overflowed { get; private set; }

    public long RecordedBytes
    {
        get
        {
            lock (_recorded)
            {
                return _recorded.Length;
            }
        }
    }

    public bool Saw(ReadOnlySpan<byte> marker)
    {
        lock (_recorded)
        {
            return _recorded.GetBuffer().AsSpan(0, (int)_recorded.Length).IndexOf(marker) >= 0;
        }
    }

    private async Task AcceptAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            TcpClient client;
            try
            {
                client = await _listener.AcceptTcpClientAsync(_stop.Token);
            }
            catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
            {
                return;
            }
            var server = new TcpClient();
            try
            {
                await server.ConnectAsync(_target, _stop.Token);
            }
            catch (Exception e) when (e is OperationCanceledException or SocketException)
            {
                client.Dispose();
                server.Dispose();
                continue;
            }
            lock (_pumps)
            {
                _pumps.Add(PumpAsync(client, server));
                _pumps.Add(PumpAsync(server, client));
            }
        }
    }

    private async Task PumpAsync(TcpClient from, TcpClient to)
    {
        var buffer = new byte[64 * 1024];
        try
        {
            int n;
            while ((n = await from.GetStream().ReadAsync(buffer, _stop.Token)) > 0)
            {
                Record(buffer.AsSpan(0, n));
                await to.GetStream().WriteAsync(buffer.AsMemory(0, n), _stop.Token);
            }
        }
        catch (Exception e) when (e is IOException or OperationCanceledException or ObjectDisposedException or SocketException)
        {
        }
        finally
        {
            from.Dispose();
            to.Dispose();
        }
    }

    private void Record(ReadOnlySpan<byte> bytes)
    {
        lock (_recorded)
        {
            if (_recorded.Length + bytes.Length > MaxRecordedBytes)
            {
                Overflowed = true;
                return;
            }
            _recorded.Write(bytes);
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _listener.Stop();
        await _accepting;
        Task[] pumps;
        lock (_pumps)
        {
            pumps = [.. _pumps];
        }
        await Task.WhenAll(pumps);
        _stop.Dispose();
        await _recorded.DisposeAsync();
    }
}
