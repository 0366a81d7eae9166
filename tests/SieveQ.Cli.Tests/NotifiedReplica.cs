using System.Diagnostics;
using System.Globalization;
using System.Net.Sockets;
using System.Text;

namespace SieveQ.Cli.Tests;

/// <summary>
/// A one-replica cluster in a temporary folder, its replica started as systemd would start a Type=notify unit (with
/// NOTIFY_SOCKET bound here), and the datagrams it sends; disposing kills what still runs and removes the folder.
/// </summary>
internal sealed class NotifiedReplica : IAsyncDisposable
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(60);

    private readonly string _dir;
    private readonly Socket _notify;
    private readonly Task<string> _stdout;

    private NotifiedReplica(string dir, int port, Socket notify, Process process)
    {
        _dir = dir;
        Port = port;
        _notify = notify;
        Process = process;
        Stderr = process.StandardError.ReadToEndAsync();
        _stdout = process.StandardOutput.ReadToEndAsync();
    }

    public int Port { get; }
    public Process Process { get; }
    public Task<string> Stderr { get; }

    public static async Task<NotifiedReplica> StartAsync(int port)
    {
        var dir = Directory.CreateTempSubdirectory("sieveq-notify-").FullName;
        var (init, initOut, initErr) = await SieveqProcess.RunAsync(["bft", "init-cluster", "--dir", dir, "--base-port", port.ToString(CultureInfo.InvariantCulture)]);
        Assert.True(init == 0, initOut + initErr);
        var notifyPath = Path.Combine(dir, "notify.sock");
        var notify = new Socket(AddressFamily.Unix, SocketType.Dgram, ProtocolType.Unspecified);
        notify.Bind(new UnixDomainSocketEndPoint(notifyPath));
        var info = SieveqProcess.Info(["replica", "--config", Path.Combine(dir, "cluster.json"), "--id", "0"], new Dictionary<string, string> { ["NOTIFY_SOCKET"] = notifyPath });
        return new NotifiedReplica(dir, port, notify, Process.Start(info)!);
    }

    /// <summary>Fails the test with the replica's stderr unless it says READY=1 within a minute.</summary>
    public async Task WaitReadyAsync()
    {
        if (await ReceiveUntilAsync("READY=1") is null)
        {
            if (!Process.HasExited)
            {
                Process.Kill();
            }
            Assert.Fail("no READY=1 within a minute; stderr: " + await Stderr);
        }
    }

    /// <summary>The notify socket's datagrams until one holds <paramref name="state"/> (null: none within a minute).</summary>
    public async Task<string?> ReceiveUntilAsync(string state)
    {
        using var limit = new CancellationTokenSource(Patience);
        var buffer = new byte[4096];
        try
        {
            while (true)
            {
                var n = await _notify.ReceiveAsync(buffer, SocketFlags.None, limit.Token);
                var datagram = Encoding.UTF8.GetString(buffer, 0, n);
                if (datagram.Split('\n').Contains(state))
                {
                    return datagram;
                }
            }
        }
        catch (OperationCanceledException)
        {
            return null;
        }
    }

    /// <summary>Waits (at most a minute) for the replica to exit and for its output to end; returns the exit code.</summary>
    public async Task<int> WaitExitAsync()
    {
        using var limit = new CancellationTokenSource(Patience);
        await Process.WaitForExitAsync(limit.Token);
        await _stdout;
        return Process.ExitCode;
    }

    public async ValueTask DisposeAsync()
    {
        if (!Process.HasExited)
        {
            Process.Kill();
            await Process.WaitForExitAsync();
        }
        Process.Dispose();
        _notify.Dispose();
        Directory.Delete(_dir, recursive: true);
    }
}
