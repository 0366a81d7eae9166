using System.ComponentModel;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using System.Text;
using Microsoft.Win32.SafeHandles;

namespace SieveQ.Firewall.Bridge;

/// <summary>
/// sieveqfw.sys through DeviceIoControl (driver/wfp/sqfw_ioctl.h). Compiled everywhere,
/// usable only on Windows; it has not been run against a loaded driver.
/// </summary>
[SupportedOSPlatform("windows")]
public sealed partial class WindowsDriverBridge : IDriverBridge
{
    private const uint DeviceType = 0x8A5F;
    private static uint Ctl(uint function, uint access) => (DeviceType << 16) | (access << 14) | (function << 2);
    internal static readonly uint IoctlGetVersion = Ctl(0x800, 1);
    internal static readonly uint IoctlSetPolicy = Ctl(0x801, 2);
    internal static readonly uint IoctlGetStats = Ctl(0x802, 1);
    internal static readonly uint IoctlSetLevel = Ctl(0x803, 2);
    internal static readonly uint IoctlWaitEvents = Ctl(0x804, 1);
    internal static readonly uint IoctlAttest = Ctl(0x805, 2);
    internal static readonly uint IoctlBindService = Ctl(0x806, 2);

    private readonly SafeFileHandle device;

    public WindowsDriverBridge(string devicePath = @"\\.\SieveQFw")
    {
        if (!OperatingSystem.IsWindows())
        {
            throw new PlatformNotSupportedException("the WFP driver exists only on Windows");
        }
        device = CreateFileW(devicePath, 0xC0000000 /* GENERIC_READ | GENERIC_WRITE */, 0, IntPtr.Zero, 3 /* OPEN_EXISTING */, 0, IntPtr.Zero);
        if (device.IsInvalid)
        {
            throw new Win32Exception(Marshal.GetLastPInvokeError(), $"cannot open {devicePath}");
        }
    }

    [LibraryImport("kernel32.dll", SetLastError = true, StringMarshalling = StringMarshalling.Utf16)]
    private static partial SafeFileHandle CreateFileW(string name, uint access, uint share, IntPtr security, uint disposition, uint flags, IntPtr template);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static unsafe partial bool DeviceIoControl(SafeFileHandle device, uint code, byte* inBuffer, uint inSize,
        byte* outBuffer, uint outSize, out uint returned, IntPtr overlapped);

    private unsafe uint Control(uint code, ReadOnlySpan<byte> input, Span<byte> output)
    {
        fixed (byte* i = input)
        fixed (byte* o = output)
        {
            if (!DeviceIoControl(device, code, i, (uint)input.Length, o, (uint)output.Length, out uint returned, IntPtr.Zero))
            {
                throw new Win32Exception(Marshal.GetLastPInvokeError());
            }
            return returned;
        }
    }

    public Task<PolicyPushResult> PushPolicyAsync(ReadOnlyMemory<byte> blob, CancellationToken cancellationToken) =>
        Task.Run(() =>
        {
            Span<byte> result = stackalloc byte[8];
            Control(IoctlSetPolicy, blob.Span, result);
            int status = BitConverter.ToInt32(result);
            uint offset = BitConverter.ToUInt32(result[4..]);
            return new PolicyPushResult(status == 0, status, status == 0 ? "ok" : $"status {status}", offset);
        }, cancellationToken);

    public Task<FirewallStatistics> GetStatisticsAsync(CancellationToken cancellationToken) =>
        Task.Run(() =>
        {
            var buffer = new byte[Unsafe.SizeOf<NativeStats>()];
            Control(IoctlGetStats, default, buffer);
            return FirewallStatistics.From(MemoryMarshal.Read<NativeStats>(buffer));
        }, cancellationToken);

    public Task SetLevelAsync(int level, CancellationToken cancellationToken) =>
        Task.Run(() => { Control(IoctlSetLevel, BitConverter.GetBytes((uint)level), default); }, cancellationToken);

    public async IAsyncEnumerable<FirewallEvent> ReadEventsAsync([EnumeratorCancellation] CancellationToken cancellationToken)
    {
        int size = Unsafe.SizeOf<NativeEvent>();
        var buffer = new byte[size * 32];
        while (!cancellationToken.IsCancellationRequested)
        {
            // The driver pends this request until an event exists; the handle's close cancels it.
            uint got = await Task.Run(() => Control(IoctlWaitEvents, default, buffer), cancellationToken).ConfigureAwait(false);
            for (int at = 0; at + size <= got; at += size)
            {
                var n = MemoryMarshal.Read<NativeEvent>(buffer.AsSpan(at, size));
                yield return ToEvent(n);
            }
        }
    }

    private static unsafe FirewallEvent ToEvent(NativeEvent n)
    {
        string path = Encoding.UTF8.GetString(n.Path, Math.Min((int)n.PathLen, 256));
        return new FirewallEvent((FirewallEventType)n.Type, (DecisionReason)n.Reason, n.ProcessKey, n.Pid, path,
            n.RuleId, n.IdentityId, n.Value, null, n.RemotePort);
    }

    public Task AttestAsync(ulong processKey, ReadOnlyMemory<byte> sha256, CancellationToken cancellationToken) =>
        Task.Run(() =>
        {
            var input = new byte[40];
            BitConverter.TryWriteBytes(input, processKey);
            sha256.Span.CopyTo(input.AsSpan(8));
            Control(IoctlAttest, input, default);
        }, cancellationToken);

    public Task BindServiceAsync(ulong processKey, string serviceName, CancellationToken cancellationToken) =>
        Task.Run(() =>
        {
            byte[] name = Encoding.UTF8.GetBytes(serviceName);
            if (name.Length > 64)
            {
                throw new ArgumentException("service names are at most 64 bytes", nameof(serviceName));
            }
            var input = new byte[80];
            BitConverter.TryWriteBytes(input, processKey);
            BitConverter.TryWriteBytes(input.AsSpan(8), (uint)name.Length);
            name.CopyTo(input.AsSpan(16));
            Control(IoctlBindService, input, default);
        }, cancellationToken);

    public Task<FirewallDecision> ExplainAsync(ConnectionQuery query, CancellationToken cancellationToken) =>
        throw new PlatformNotSupportedException("explain runs on the policy file through the core library (sieveq fw explain --policy)");

    public ValueTask DisposeAsync()
    {
        device.Dispose();
        return ValueTask.CompletedTask;
    }
}
