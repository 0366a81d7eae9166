using System.Runtime.InteropServices;

namespace SieveQ.Cli.Tests;

/// <summary>
/// Signals a child process directly (spawning `kill` takes milliseconds, longer than a component's stop) and reads
/// its scheduler state, so a test knows a freeze landed on a live process and not on one that had already exited.
/// </summary>
internal static partial class ProcessFreeze
{
    public const int SigTerm = 15;
    public const int SigStop = 19;
    public const int SigCont = 18;

    public static void Signal(int pid, int signal)
    {
        if (Kill(pid, signal) != 0)
        {
            throw new InvalidOperationException($"kill({pid}, {signal}) failed: errno {Marshal.GetLastPInvokeError()}");
        }
    }

    /// <summary>True when the process is stopped by a signal ('T' in /proc/PID/stat), not running, sleeping or a zombie.</summary>
    public static bool IsStopped(int pid)
    {
        string stat;
        try
        {
            stat = File.ReadAllText($"/proc/{pid}/stat");
        }
        catch (IOException)
        {
            return false;
        }
        // "pid (comm) S ...": the comm may hold spaces and parentheses, the state follows the last ')'.
        var close = stat.LastIndexOf(')');
        return close > 0 && close + 2 < stat.Length && stat[close + 2] == 'T';
    }

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);
}
