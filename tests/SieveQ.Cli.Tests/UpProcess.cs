using System.Diagnostics;
using System.Text;

namespace SieveQ.Cli.Tests;

/// <summary>
/// `sieveq up` as a real process for a test: its output (stdout, and stderr marked "stderr: ") collected, its
/// "all components healthy" line awaited, and stopped by SIGTERM as a service manager would stop it.
/// </summary>
internal sealed class UpProcess : IAsyncDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _output = new();
    private readonly TaskCompletionSource _healthy = new(TaskCreationOptions.RunContinuationsAsynchronously);

    private UpProcess(Process process)
    {
        _process = process;
        _process.OutputDataReceived += (_, e) =>
        {
            lock (_output)
            {
                _output.AppendLine(e.Data);
            }
            if (e.Data?.StartsWith("all components healthy", StringComparison.Ordinal) == true)
            {
                _healthy.TrySetResult();
            }
        };
        _process.ErrorDataReceived += (_, e) =>
        {
            lock (_output)
            {
                _output.AppendLine("stderr: " + e.Data);
            }
        };
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

    /// <summary>Everything `up` printed so far.</summary>
    public string Text
    {
        get
        {
            lock (_output)
            {
                return _output.ToString();
            }
        }
    }

    public int ExitCode => _process.ExitCode;

    /// <summary>Starts `sieveq up ARGS` (<paramref name="dll"/>: another sieveq.dll than the test's own).</summary>
    public static UpProcess Start(IEnumerable<string> args, string? dll = null) => new(Process.Start(SieveqProcess.Info(["up", .. args], dll: dll))!);

    /// <summary>True once `up` reported all components healthy; false if it exited first or took more than three minutes.</summary>
    public async Task<bool> WaitHealthyAsync()
    {
        await Task.WhenAny(_healthy.Task, _process.WaitForExitAsync(), Task.Delay(TimeSpan.FromMinutes(3)));
        return _healthy.Task.IsCompleted;
    }

    /// <summary>SIGTERM, as a service manager would send: `up` stops every component it started, then exits (killed after 60 s).</summary>
    public async Task StopAsync()
    {
        if (!_process.HasExited)
        {
            using var kill = Process.Start("kill", ["-TERM", _process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]);
            await kill.WaitForExitAsync();
        }
        using var limit = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        try
        {
            await _process.WaitForExitAsync(limit.Token);
        }
        catch (OperationCanceledException)
        {
            _process.Kill(entireProcessTree: true);
            throw;
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            await StopAsync();
        }
        _process.Dispose();
    }
}
