using System.Reflection;
using System.Runtime.InteropServices;

namespace SieveQ.Firewall.Bridge;

/// <summary>Layouts of driver/core/sqfw.h, shared by the shared library and the driver's IOCTLs.</summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct NativeRequest
{
    public ulong ProcessKey;
    public byte* Path;
    public byte* Service;
    public byte* User;
    public uint PathLen;
    public uint ServiceLen;
    public uint UserLen;
    public uint Pid;
    public byte Direction;
    public byte Protocol;
    public byte Family;
    public byte Flags;
    public ushort LocalPort;
    public ushort RemotePort;
    public fixed byte LocalAddr[16];
    public fixed byte RemoteAddr[16];
}

[StructLayout(LayoutKind.Sequential)]
internal struct NativeDecision
{
    public uint Verdict;
    public uint Reason;
    public uint RuleId;
    public uint IdentityId;
    public uint ClassId;
    public uint Flags;
    public uint Level;
    public uint PendSlot;
    public ulong WaitNs;
}

[StructLayout(LayoutKind.Sequential)]
internal struct NativeLimits
{
    public uint MaxFlows;
    public uint MaxSynSlots;
    public uint MaxAttest;
    public uint MaxServices;
    public uint MaxEvents;
    public uint MaxProcesses;
    public ulong Seed;
}

[StructLayout(LayoutKind.Sequential)]
internal struct NativeStats
{
    public ulong PolicySerial, Authorized, Allowed, Blocked, Pended, PendTimeouts, PendFull, Audited, SynDropped,
        RateLimited, LevelDropped, PacketsPassed, PacketsDeferred, PacketsDropped, FlowsCreated, FlowsFailed, EventsDropped;
    public uint FlowsActive, PendedNow, Level, LevelCount, PolicyRules, PolicyIdentities;
    public ulong ProcessesEvicted, ProcessesRefused;
    public uint ProcessesTracked, ProcessesServices;
    public ulong EventsSuppressed;
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct NativeEvent
{
    public uint Type;
    public uint Reason;
    public ulong TimeNs;
    public ulong ProcessKey;
    public uint Pid;
    public uint RuleId;
    public uint IdentityId;
    public uint Value;
    public byte Direction;
    public byte Protocol;
    public byte Family;
    public byte PathTruncated;
    public ushort RemotePort;
    public ushort PathLen;
    public fixed byte RemoteAddr[16];
    public fixed byte Path[256];
    public fixed byte LocalAddr[16];
    public ushort LocalPort;
    public byte UserLen;
    public byte Reserved;
    public uint ClassId;
    public fixed byte User[184];
    public uint ImageVolume;
    public uint Reserved2;
    public ulong ImageFileId;
}

/// <summary>P/Invoke surface of libsieveqfw.so (driver/core/host.c).</summary>
internal static unsafe partial class NativeCore
{
    public const string Library = "sieveqfw";
    private static string? explicitPath;
    private static int resolverInstalled;

    /// <summary>Points the loader at a specific build of the library (tests, the CLI next to driver/build).</summary>
    public static void UseLibrary(string path)
    {
        explicitPath = path;
        InstallResolver();
    }

    internal static void InstallResolver()
    {
        if (Interlocked.Exchange(ref resolverInstalled, 1) != 0)
        {
            return;
        }
        NativeLibrary.SetDllImportResolver(typeof(NativeCore).Assembly, Resolve);
    }

    private static IntPtr Resolve(string name, Assembly assembly, DllImportSearchPath? searchPath)
    {
        if (name != Library)
        {
            return IntPtr.Zero;
        }
        string? path = explicitPath ?? Environment.GetEnvironmentVariable("SIEVEQ_FW_LIBRARY");
        if (path is not null && NativeLibrary.TryLoad(path, out IntPtr handle))
        {
            return handle;
        }
        return NativeLibrary.TryLoad("libsieveqfw.so", assembly, searchPath, out handle) ? handle : IntPtr.Zero;
    }

    [LibraryImport(Library, EntryPoint = "sqfw_abi_version")]
    public static partial uint AbiVersion();

    [LibraryImport(Library, EntryPoint = "sqfw_policy_check")]
    public static partial int PolicyCheck(byte* blob, nuint len, out uint errOffset);

    [LibraryImport(Library, EntryPoint = "sqfw_status_name")]
    public static partial IntPtr StatusName(int status);

    [LibraryImport(Library, EntryPoint = "sqfw_host_open")]
    public static partial IntPtr HostOpen(in NativeLimits limits);

    [LibraryImport(Library, EntryPoint = "sqfw_host_close")]
    public static partial void HostClose(IntPtr host);

    [LibraryImport(Library, EntryPoint = "sqfw_host_set_policy")]
    public static partial int HostSetPolicy(IntPtr host, byte* blob, nuint len, ulong nowNs, out uint errOffset);

    [LibraryImport(Library, EntryPoint = "sqfw_host_authorize")]
    public static partial int HostAuthorize(IntPtr host, in NativeRequest request, ulong nowNs, out NativeDecision decision);

    [LibraryImport(Library, EntryPoint = "sqfw_host_explain")]
    public static partial int HostExplain(IntPtr host, in NativeRequest request, ulong nowNs, out NativeDecision decision);

    [LibraryImport(Library, EntryPoint = "sqfw_host_flow_established")]
    public static partial int HostFlowEstablished(IntPtr host, ulong flowId, in NativeRequest request, ulong nowNs);

    [LibraryImport(Library, EntryPoint = "sqfw_host_flow_deleted")]
    public static partial int HostFlowDeleted(IntPtr host, ulong flowId);

    [LibraryImport(Library, EntryPoint = "sqfw_host_packet")]
    public static partial int HostPacket(IntPtr host, ulong flowId, uint bytes, ulong nowNs, out NativeDecision decision);

    [LibraryImport(Library, EntryPoint = "sqfw_host_attest")]
    public static partial int HostAttest(IntPtr host, ulong processKey, byte* sha256, ulong nowNs);

    [LibraryImport(Library, EntryPoint = "sqfw_host_set_level")]
    public static partial int HostSetLevel(IntPtr host, uint level, ulong nowNs);

    [LibraryImport(Library, EntryPoint = "sqfw_host_tick")]
    public static partial void HostTick(IntPtr host, ulong nowNs);

    [LibraryImport(Library, EntryPoint = "sqfw_host_stats")]
    public static partial void HostStats(IntPtr host, out NativeStats stats);

    [LibraryImport(Library, EntryPoint = "sqfw_host_next_event")]
    public static partial int HostNextEvent(IntPtr host, out NativeEvent ev);

    [LibraryImport(Library, EntryPoint = "sqfw_host_pend_take_ready")]
    public static partial int HostPendTakeReady(IntPtr host, ulong nowNs, out uint slot, out uint verdictOnTimeout, out uint expired);

    [LibraryImport(Library, EntryPoint = "sqfw_host_service_bind")]
    public static partial int HostServiceBind(IntPtr host, ulong processKey, byte* name, uint nameLen);

    [LibraryImport(Library, EntryPoint = "sqfw_boot_request_check")]
    public static partial int BootRequestCheck(byte* request, nuint len, out uint enable);

    public static string StatusText(int status) => Marshal.PtrToStringUTF8(StatusName(status)) ?? status.ToString(System.Globalization.CultureInfo.InvariantCulture);
}
