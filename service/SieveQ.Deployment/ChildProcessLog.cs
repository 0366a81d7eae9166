using System.Diagnostics;

namespace SieveQ.Deployment;

/// <summary>
/// A child process's standard output and error, written line by line to its log file. The file closes when
/// both streams have ended, not when the process exits: a crashing component's last lines are still in the
/// pipe when the exit is reported, and they are the ones an operator needs.
/// </summary>
public sealed class ChildProcessLog
{
    private readonly StreamWriter _log;
    private int _openStreams = 2;

    public ChildProcessLog(string path)
    {
        _log = new StreamWriter(path, append: true) { AutoFlush = true };
    }

    /// <summary>Routes <paramref name="process"/>'s output here (stdout to <paramref name="onStdout"/> instead, when given); call before starting it.</summary>
    public void Attach(Process process, Action<string>? onStdout = null)
    {
        ArgumentNullException.ThrowIfNull(process);
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is null)
            {
                StreamEnded();
            }
            else if (onStdout is not null)
            {
                onStdout(e.Data);
            }
            else
            {
                Write(e.Data);
            }
        };
        process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is null)
            {
                StreamEnded();
            }
            else
            {
                Write(e.Data);
            }
        };
    }

    /// <summary>Starts <paramref name="process"/> with its output read into this log; the log closes if it cannot start.</summary>
    public void Start(Process process)
    {
        ArgumentNullException.ThrowIfNull(process);
        try
        {
            process.Start();
        }
        catch
        {
            Close();
            throw;
        }
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
    }

    public void Write(string line)
    {
        lock (_log)
        {
            try
            {
                _log.WriteLine(line);
            }
            catch (ObjectDisposedException)
            {
                // both streams ended and the log was closed
            }
        }
    }

    private void StreamEnded()
    {
        if (Interlocked.Decrement(ref _openStreams) == 0)
        {
            Close();
        }
    }

    private void Close()
    {
        lock (_log)
        {
            _log.Dispose();
        }
    }
}
