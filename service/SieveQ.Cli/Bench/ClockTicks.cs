using System.Runtime.InteropServices;

namespace SieveQ.Cli.Bench;

/// <summary>The unit of the CPU times in /proc/PID/stat: sysconf(_SC_CLK_TCK), read once from libc.</summary>
internal static class ClockTicks
{
    // _SC_CLK_TCK in glibc and musl.
    private const int ScClkTck = 2;

    /// <summary>Ticks per second; 100, Linux's fixed USER_HZ, when libc cannot be asked.</summary>
    public static long PerSecond { get; } = Read();

    private static long Read()
    {
        try
        {
            long ticks = SysConf(ScClkTck);
            return ticks > 0 && TimeSpan.TicksPerSecond % ticks == 0 ? ticks : 100;
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return 100;
        }
    }

    // DllImport, not LibraryImport: the signature is blittable, so no marshalling code is generated either way,
    // and LibraryImport would need unsafe code enabled for the whole CLI.
    [DllImport("libc", EntryPoint = "sysconf")]
    [DefaultDllImportSearchPaths(DllImportSearchPath.SafeDirectories)]
    private static extern nint SysConf(int name);
}
