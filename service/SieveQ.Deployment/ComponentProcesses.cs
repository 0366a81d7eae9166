using System.Diagnostics;
using System.Globalization;

namespace SieveQ.Deployment;

/// <summary>
/// The child processes of a local deployment, each started as this program (`sieveq ...`) with its
/// output in <c>name.log</c>. Stopping sends SIGTERM, then SIGKILL after a grace period; components
/// are stopped in reverse start order, so applications go before the agent and the agent before the
/// sieve it talks to.
/// </summary>
public sealed class ComponentProcesses : IAsyncDisposable
{
    private readonly Func<IReadOnlyList<string>, ProcessStartInfo> _command;
    private readonly string _logDirectory;
    private readonly List<(string Name, Process Process)> _children = [];
    private readonly Lock _lock = new();

    /// <param name="command">How to run this program with the given arguments.</param>
    public ComponentProcesses(Func<IReadOnlyList<string>, ProcessStartInfo> command, string logDirectory)
    {
        _command = command;
        _logDirectory = logDirectory;
        Directory.CreateDirectory(logDirectory);
    }

    /// <summary>Raised with the component's name and exit code when a child exits on its own.</summary>
    public event Action<string, int>? Exited;

    public string LogPath(string name) => Path.Combine(_logDirectory, name + ".log");

    public IReadOnlyList<string> Names
    {
        get
        {
            lock (_lock)
            {
                return _children.Select(c => c.Name).ToList();
            }
        }
    }

    /// <summary>Starts a component; <paramref name="onStdout"/> (if given) sees its stdout lines, which then do not go to the log.</summary>
    public Process Start(string name, IReadOnlyList<string> args, Action<string>? onStdout = null)
    {
        var psi = _command(args);
        psi.UseShellExecute = false;
        psi.RedirectStandardOutput = true;
        psi.RedirectStandardError = true;
        var log = new ChildProcessLog(LogPath(name));
        var p = new Process { StartInfo = psi, EnableRaisingEvents = true };
        log.Attach(p, onStdout);
        p.Exited += (_, _) =>
        {
            bool stopping;
            lock (_lock)
            {
                stopping = !_children.Any(c => ReferenceEquals(c.Process, p));
            }
            if (!stopping)
            {
                Exited?.Invoke(name, SafeExitCode(p));
            }
        };
        log.Write($"---- {DateTime.UtcNow:O} start: {string.Join(' ', args)}");
        log.Start(p);
        lock (_lock)
        {
            _children.Add((name, p));
        }
        return p;
    }

    public Process? Get(string name)
    {
        lock (_lock)
        {
            return _children.LastOrDefault(c => c.Name == name).Process;
        }
    }

    public async Task SignalAsync(string name, string signal)
    {
        if (Get(name) is { HasExited: false } p)
        {
            await Signal(p, signal).ConfigureAwait(false);
        }
    }

    /// <summary>Stops one component and forgets it (a later Start under the same name is a restart).</summary>
    public async Task StopAsync(string name, TimeSpan grace, bool kill = false)
    {
        Process? p;
        lock (_lock)
        {
            var i = _children.FindLastIndex(c => c.Name == name);
            if (i < 0)
            {
                return;
            }
            p = _children[i].Process;
            _children.RemoveAt(i);
        }
        await StopProcess(p, grace, kill).ConfigureAwait(false);
        p.Dispose();
    }

    public async Task StopAllAsync(TimeSpan grace)
    {
        List<(string Name, Process Process)> children;
        lock (_lock)
        {
            children = [.. _children];
            _children.Clear();
        }
        children.Reverse();
        foreach (var (_, p) in children)
        {
            try
            {
                await StopProcess(p, grace, kill: false).ConfigureAwait(false);
            }
            catch (Exception e) when (e is InvalidOperationException or System.ComponentModel.Win32Exception or IOException or OperationCanceledException)
            {
                // The process went away between our checks (or could not be signalled): one child must never keep
                // the rest running. A stop under heavy load once ended `up` here and left a replica-SQ behind.
                TryKill(p);
            }
            finally
            {
                p.Dispose();
            }
        }
    }

    private static readonly TimeSpan KillWait = TimeSpan.FromSeconds(10);

    private static async Task StopProcess(Process p, TimeSpan grace, bool kill)
    {
        if (p.HasExited)
        {
            return;
        }
        await Signal(p, kill ? "KILL" : "TERM").ConfigureAwait(false);
        using var cts = new CancellationTokenSource(grace);
        try
        {
            await p.WaitForExitAsync(cts.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // A kill (or a grace of zero) still has to be waited for: the caller relies on the process being gone.
            TryKill(p);
            using var last = new CancellationTokenSource(KillWait);
            await p.WaitForExitAsync(last.Token).ConfigureAwait(false);
        }
    }

    /// <summary>SIGKILL to the process and its children; a process that already exited is not an error.</summary>
    private static void TryKill(Process p)
    {
        try
        {
            p.Kill(entireProcessTree: true);
        }
        catch (Exception e) when (e is InvalidOperationException or System.ComponentModel.Win32Exception)
        {
            // exited meanwhile
        }
    }

    private static async Task Signal(Process p, string signal)
    {
        if (OperatingSystem.IsWindows())
        {
            p.Kill(entireProcessTree: true);
            return;
        }
        using var k = Process.Start(new ProcessStartInfo("kill", [$"-{signal}", p.Id.ToString(CultureInfo.InvariantCulture)]) { UseShellExecute = false })!;
        await k.WaitForExitAsync().ConfigureAwait(false);
    }

    private static int SafeExitCode(Process p)
    {
        try
        {
            return p.ExitCode;
        }
        catch (InvalidOperationException)
        {
            return -1;
        }
    }

    public async ValueTask DisposeAsync() => await StopAllAsync(TimeSpan.FromSeconds(5)).ConfigureAwait(false);
}
