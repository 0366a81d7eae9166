using System.Diagnostics;
using System.Globalization;
using Microsoft.Extensions.Logging;
using SieveQ.Bft.Hosting.Config;
using SieveQ.Bft.Hosting.Replica;
using SieveQ.Deployment;

namespace SieveQ.Cli.Commands;

/// <summary>Helpers shared by the commands that start local clusters (cluster, bench bft).</summary>
internal static class ClusterSupport
{
    /// <summary>
    /// Console logging to stderr only, so stdout stays free for results and status lines; each kind of message
    /// is rate-limited, so a flood (refused connections, malformed frames) cannot fill the disk with log.
    /// </summary>
    public static ILoggerFactory CreateLogging(LogLevel level) => new SieveQ.Bft.Hosting.Logging.RateLimitedLoggerFactory(LoggerFactory.Create(b => b
        .SetMinimumLevel(level)
        .AddConsole(o => o.LogToStandardErrorThreshold = LogLevel.Trace)
        .AddSimpleConsole(o =>
        {
            o.SingleLine = true;
            o.TimestampFormat = "HH:mm:ss.fff ";
        })));

    /// <summary>
    /// Lets socket completions run on the socket engine's thread instead of being queued to the thread pool.
    /// Every message otherwise costs an extra thread hand-off on receive and on send; on a small, busy
    /// machine each hand-off waits for a CPU and the latency more than doubles (docs/design-figures.md).
    /// Safe here because nothing the link loops run blocks: they verify, decode and queue, and every wait
    /// is asynchronous. Must run before the first socket is created; an operator's explicit setting wins.
    /// </summary>
    public static void PreferInlineSocketCompletions()
    {
        const string name = "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS";
        if (Environment.GetEnvironmentVariable(name) is null)
        {
            Environment.SetEnvironmentVariable(name, "1");
        }
    }

    /// <summary>"20s", "500ms", "2m" or plain seconds.</summary>
    public static TimeSpan ParseDuration(string text)
    {
        text = text.Trim();
        if (text.EndsWith("ms", StringComparison.Ordinal))
        {
            return TimeSpan.FromMilliseconds(double.Parse(text[..^2], CultureInfo.InvariantCulture));
        }
        if (text.EndsWith('s'))
        {
            return TimeSpan.FromSeconds(double.Parse(text[..^1], CultureInfo.InvariantCulture));
        }
        if (text.EndsWith('m'))
        {
            return TimeSpan.FromMinutes(double.Parse(text[..^1], CultureInfo.InvariantCulture));
        }
        return TimeSpan.FromSeconds(double.Parse(text, CultureInfo.InvariantCulture));
    }
}

/// <summary>
/// Child replica processes of this same executable (`sieveq replica ...`), with their output in log files.
/// Disposing stops them: SIGTERM first, SIGKILL after a grace period.
/// </summary>
internal sealed class ClusterProcesses(ClusterConfig config, string configPath) : IAsyncDisposable
{
    private readonly List<(int Id, Process Process)> _children = [];

    public IReadOnlyList<(int Id, Process Process)> Children => _children;

    public Process Start(int id, params string[] extra)
    {
        var psi = SelfCommand(["replica", "--config", configPath, "--id", id.ToString(CultureInfo.InvariantCulture), .. extra]);
        psi.RedirectStandardOutput = true;
        psi.RedirectStandardError = true;
        var logPath = Path.Combine(config.BaseDirectory, $"replica-{id}{(extra.Length > 0 ? "-" + string.Join("", extra).Trim('-') : "")}.log");
        var log = new ChildProcessLog(logPath);
        var p = new Process { StartInfo = psi, EnableRaisingEvents = true };
        log.Attach(p);
        log.Start(p);
        _children.Add((id, p));
        return p;
    }

    /// <summary>How to run this same program with other arguments, whether it was started as an apphost or via `dotnet sieveq.dll`.</summary>
    public static ProcessStartInfo SelfCommand(IEnumerable<string> args)
    {
        var exe = Environment.ProcessPath ?? "dotnet";
        var psi = new ProcessStartInfo { UseShellExecute = false };
        if (Path.GetFileNameWithoutExtension(exe).Equals("dotnet", StringComparison.OrdinalIgnoreCase))
        {
            psi.FileName = exe;
            psi.ArgumentList.Add(typeof(ClusterProcesses).Assembly.Location);
        }
        else
        {
            psi.FileName = exe;
        }
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        if (Environment.GetEnvironmentVariable(Gen0SizeVariable) is null)
        {
            psi.Environment[Gen0SizeVariable] = ComponentGen0Size;
        }
        return psi;
    }

    /// <summary>
    /// The runtime reads the gen0 budget only from the environment (there is no runtimeconfig knob), so
    /// the launcher sets it for its components unless the operator already did. A replica at full load keeps
    /// tens of megabytes of requests and held messages alive across each gen0 collection; with the default
    /// budget it collected 284 times in a run and paused 4.3 s in all, with 64 MB 32 times and 1.3 s
    /// (bench e2e --rate max, 500 B). The cost is up to 64 MB more resident memory per process.
    /// </summary>
    internal const string Gen0SizeVariable = "DOTNET_GCgen0size", ComponentGen0Size = "0x4000000";

    public ReplicaStatus? Status(int id) => ReplicaStatus.TryRead(Path.Combine(config.ReplicaDataDir(id), "status.json"));

    /// <summary>Waits until every replica reports links to all others (or the timeout passes).</summary>
    public async Task<bool> WaitMeshAsync(IEnumerable<int> ids, TimeSpan timeout, CancellationToken ct)
    {
        var deadline = Stopwatch.StartNew();
        while (deadline.Elapsed < timeout)
        {
            if (ids.All(id => Status(id) is { ConnectedReplicas: var c } && c == config.N - 1))
            {
                return true;
            }
            if (_children.Any(c => c.Process.HasExited))
            {
                return false;
            }
            await Task.Delay(100, ct).ConfigureAwait(false);
        }
        return false;
    }

    public static async Task SignalAsync(Process p, string signal)
    {
        if (p.HasExited)
        {
            return;
        }
        using var kill = Process.Start(new ProcessStartInfo("kill", [$"-{signal}", p.Id.ToString(CultureInfo.InvariantCulture)]) { UseShellExecute = false })!;
        await kill.WaitForExitAsync().ConfigureAwait(false);
    }

    public async Task StopAllAsync(TimeSpan grace)
    {
        foreach (var (_, p) in _children)
        {
            await SignalAsync(p, "TERM").ConfigureAwait(false);
        }
        using var cts = new CancellationTokenSource(grace);
        foreach (var (_, p) in _children)
        {
            try
            {
                await p.WaitForExitAsync(cts.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                p.Kill();
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        await StopAllAsync(TimeSpan.FromSeconds(5)).ConfigureAwait(false);
        foreach (var (_, p) in _children)
        {
            p.Dispose();
        }
        _children.Clear();
    }
}
