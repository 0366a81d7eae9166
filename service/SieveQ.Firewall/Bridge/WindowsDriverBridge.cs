using System.ComponentModel;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using System.Text;
using Microsoft.Win32.SafeHandles;

namespace SieveQ.Firewall.Bridge;

/// <summary>The driver speaks another device interface than this agent (driver/wfp/sqfw_ioctl.h).</summary>
public sealed class DriverInterfaceMismatchException : InvalidOperationException
{
    public DriverInterfaceMismatchException()
    {
    }

    public DriverInterfaceMismatchException(string message) : base(message)
    {
    }

    public DriverInterfaceMismatchException(string message, Exception inner) : base(message, inner)
    {
    }
}

/// <summary>What the driver reported in the handshake.</summary>
public sealed record DriverVersion(uint InterfaceVersion, uint AbiVersion, uint FormatVersion, uint Major, uint Minor);

/// <summary>
/// sieveqfw.sys through DeviceIoControl (driver/wfp/sqfw_ioctl.h). The device is opened for overlapped I/O and
/// bound to the thread pool, so the pending wait for events never holds up a policy push, a statistics read or
/// an attestation, and every request can be cancelled (CancelIoEx). Run under Wine against the real driver by
/// tests/SieveQ.Firewall.WineCheck; not yet on Windows.
/// </summary>
[SupportedOSPlatform("windows")]
public sealed partial class WindowsDriverBridge : IDriverBridge
{
    /// <summary>SQFW_INTERFACE_VERSION: the driver refuses every request but the version from another one.</summary>
    public const uint InterfaceVersion = 3;
    /// <summary>SQFW_DRIVER_MAX_POLICY: the driver refuses larger blobs before allocating anything.</summary>
    public const int MaxPolicyBytes = 8 * 1024 * 1024;
    internal const uint HelloMagic = 0x51465753;
    internal const int EventPathBytes = 256;

    private const uint DeviceType = 0x8A5F;
    private static uint Ctl(uint function, uint access) => (DeviceType << 16) | (access << 14) | (function << 2);
    internal static readonly uint IoctlGetVersion = Ctl(0x800, 1);
    internal static readonly uint IoctlSetPolicy = Ctl(0x801, 2);
    internal static readonly uint IoctlGetStats = Ctl(0x802, 1);
    internal static readonly uint IoctlSetLevel = Ctl(0x803, 2);
    internal static readonly uint IoctlWaitEvents = Ctl(0x804, 1);
    internal static readonly uint IoctlAttest = Ctl(0x805, 2);
    internal static readonly uint IoctlBindService = Ctl(0x806, 2);
    internal static readonly uint IoctlHello = Ctl(0x807, 1);
    internal const uint IoctlSetBootFilters = BootFilterMessages.IoctlCode;

    private const int ErrorAccessDenied = 5;
    private const int ErrorInvalidFunction = 1;
    private const int ErrorIoPending = 997;
    private const int ErrorOperationAborted = 995;
    private const int ErrorRevisionMismatch = 1306;
    private const uint FileFlagOverlapped = 0x40000000;

    private static readonly unsafe IOCompletionCallback Completed = OnCompleted;

    private readonly SafeFileHandle device;
    private readonly ThreadPoolBoundHandle bound;
    private readonly Func<uint, long, ulong> processKey;
    private readonly object gate = new();
    private readonly TaskCompletionSource drained = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int outstanding;
    private bool disposed;

    public WindowsDriverBridge(string devicePath = @"\\.\SieveQFw") : this(devicePath, ProcessKey)
    {
    }

    /// <summary>
    /// processKey: how the driver keys a process from its id and creation time (a test host's may differ);
    /// interfaceVersion: what to claim in the handshake (a check of the refusal claims another).
    /// </summary>
    internal WindowsDriverBridge(string devicePath, Func<uint, long, ulong> processKey, uint interfaceVersion = InterfaceVersion)
    {
        if (!OperatingSystem.IsWindows())
        {
            throw new PlatformNotSupportedException("the WFP driver exists only on Windows");
        }
        this.processKey = processKey;
        device = CreateFileW(devicePath, 0xC0000000 /* GENERIC_READ | GENERIC_WRITE */, 0, IntPtr.Zero, 3 /* OPEN_EXISTING */,
            FileFlagOverlapped, IntPtr.Zero);
        if (device.IsInvalid)
        {
            int error = Marshal.GetLastPInvokeError();
            throw new Win32Exception(error, error == ErrorAccessDenied
                ? $"cannot open {devicePath}: it admits SYSTEM and Administrators only, one handle at a time (is another agent running?)"
                : $"cannot open {devicePath}");
        }
        try
        {
            // Before the handle is bound to the thread pool, so the one request this constructor makes can be waited
            // for on an event; the driver answers it at once.
            Version = Handshake(devicePath, interfaceVersion);
            bound = ThreadPoolBoundHandle.BindHandle(device);
        }
        catch
        {
            device.Dispose();
            throw;
        }
    }

    public DriverVersion Version { get; }

    /// <summary>The pid XOR creation time (100 ns) times the golden ratio, as SQFW_PROCESS_KEY.</summary>
    internal static ulong ProcessKey(uint pid, long creationTime) => pid ^ unchecked((ulong)creationTime * 0x9E3779B97F4A7C15UL);

    [LibraryImport("kernel32.dll", SetLastError = true, StringMarshalling = StringMarshalling.Utf16)]
    private static partial SafeFileHandle CreateFileW(string name, uint access, uint share, IntPtr security, uint disposition, uint flags, IntPtr template);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static unsafe partial bool DeviceIoControl(SafeFileHandle device, uint code, byte* inBuffer, uint inSize,
        byte* outBuffer, uint outSize, uint* returned, NativeOverlapped* overlapped);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static unsafe partial bool GetOverlappedResult(SafeFileHandle device, NativeOverlapped* overlapped, out uint transferred,
        [MarshalAs(UnmanagedType.Bool)] bool wait);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static unsafe partial bool CancelIoEx(SafeFileHandle device, NativeOverlapped* overlapped);

    /// <summary>One request, waited for on an event; only before the handle is bound to the thread pool.</summary>
    private unsafe int ControlBlocking(uint code, ReadOnlySpan<byte> input, Span<byte> output, out uint returned)
    {
        using var done = new ManualResetEvent(false);
        var ov = (NativeOverlapped*)NativeMemory.AllocZeroed((nuint)sizeof(NativeOverlapped));
        try
        {
            ov->EventHandle = done.SafeWaitHandle.DangerousGetHandle();
            fixed (byte* i = input)
            fixed (byte* o = output)
            {
                returned = 0;
                if (!DeviceIoControl(device, code, i, (uint)input.Length, o, (uint)output.Length, null, ov))
                {
                    int error = Marshal.GetLastPInvokeError();
                    if (error != ErrorIoPending)
                    {
                        return error;
                    }
                }
                return GetOverlappedResult(device, ov, out returned, true) ? 0 : Marshal.GetLastPInvokeError();
            }
        }
        finally
        {
            NativeMemory.Free(ov);
        }
    }

    private DriverVersion Handshake(string devicePath, uint interfaceVersion)
    {
        Span<byte> hello = stackalloc byte[8];
        BitConverter.TryWriteBytes(hello, HelloMagic);
        BitConverter.TryWriteBytes(hello[4..], interfaceVersion);
        Span<byte> info = stackalloc byte[20];
        int error = ControlBlocking(IoctlHello, hello, info, out uint got);
        if (error == 0 && got >= 20)
        {
            return ReadVersion(info, got);
        }
        if (error is ErrorRevisionMismatch or ErrorInvalidFunction)
        {
            // A driver from before the handshake does not know the code; its version answer has no interface field.
            info.Clear();
            DriverVersion? theirs = ControlBlocking(IoctlGetVersion, default, info, out got) == 0 && got >= 16 ? ReadVersion(info, got) : null;
            string what = theirs is null
                ? "a driver that does not say its version"
                : $"driver {theirs.Major}.{theirs.Minor}, device interface {theirs.InterfaceVersion}";
            throw new DriverInterfaceMismatchException(
                $"{devicePath} is {what}; this agent speaks device interface {interfaceVersion}. Install the sieveqfw.sys that ships with this agent.");
        }
        throw new Win32Exception(error, $"handshake with {devicePath} failed");
    }

    private static DriverVersion ReadVersion(ReadOnlySpan<byte> info, uint got) => new(
        got >= 20 ? BitConverter.ToUInt32(info[16..]) : 1,
        BitConverter.ToUInt32(info), BitConverter.ToUInt32(info[4..]), BitConverter.ToUInt32(info[8..]), BitConverter.ToUInt32(info[12..]));

    /// <summary>
    /// One overlapped request. Input and output are pinned until it completes; cancelling the token cancels the
    /// request in the driver (a pending wait for events ends at once).
    /// </summary>
    internal unsafe Task<uint> ControlAsync(uint code, byte[]? input, byte[]? output, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled<uint>(cancellationToken);
        }
        lock (gate)
        {
            ObjectDisposedException.ThrowIf(disposed, this);
            outstanding++;
        }
        var op = new Operation(this, cancellationToken);
        NativeOverlapped* ov = bound.AllocateNativeOverlapped(Completed, op, new object?[] { input, output });
        op.Overlapped = ov;
        op.Register();
        bool ok;
        int error;
        fixed (byte* i = input)
        fixed (byte* o = output)
        {
            ok = DeviceIoControl(device, code, i, (uint)(input?.Length ?? 0), o, (uint)(output?.Length ?? 0), null, ov);
            error = ok ? 0 : Marshal.GetLastPInvokeError();
        }
        if (!ok && error != ErrorIoPending)
        {
            // Failed before it was queued: no completion packet comes for it.
            op.Finish();
            bound.FreeNativeOverlapped(ov);
            Release();
            return Task.FromException<uint>(new Win32Exception(error));
        }
        op.Issued();
        return op.Task;
    }

    private static unsafe void OnCompleted(uint errorCode, uint bytes, NativeOverlapped* ov)
    {
        var op = (Operation)ThreadPoolBoundHandle.GetNativeOverlappedState(ov)!;
        op.Finish();
        op.Owner.bound.FreeNativeOverlapped(ov);
        op.Owner.Release();
        op.Complete(errorCode, bytes);
    }

    private void Release()
    {
        lock (gate)
        {
            if (--outstanding == 0 && disposed)
            {
                drained.TrySetResult();
            }
        }
    }

    private sealed unsafe class Operation
    {
        private readonly TaskCompletionSource<uint> completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly CancellationToken token;
        private readonly object sync = new();
        private CancellationTokenRegistration registration;
        private bool issued, finished, cancelRequested;

        public Operation(WindowsDriverBridge owner, CancellationToken token)
        {
            Owner = owner;
            this.token = token;
        }

        public WindowsDriverBridge Owner { get; }
        public NativeOverlapped* Overlapped { get; set; }
        public Task<uint> Task => completion.Task;

        // Registered before the request is issued, so the registration exists whenever a completion disposes it.
        public void Register()
        {
            if (token.CanBeCanceled)
            {
                registration = token.UnsafeRegister(static s => ((Operation)s!).Cancel(), this);
            }
        }

        public void Issued()
        {
            lock (sync)
            {
                issued = true;
                if (cancelRequested && !finished)
                {
                    CancelIoEx(Owner.device, Overlapped);
                }
            }
        }

        // Under the lock, CancelIoEx never sees an OVERLAPPED that a completion has already freed.
        private void Cancel()
        {
            lock (sync)
            {
                cancelRequested = true;
                if (issued && !finished)
                {
                    CancelIoEx(Owner.device, Overlapped);
                }
            }
        }

        public void Finish()
        {
            lock (sync)
            {
                finished = true;
            }
            registration.Dispose();
        }

        public void Complete(uint errorCode, uint bytes)
        {
            if (errorCode == 0)
            {
                completion.TrySetResult(bytes);
            }
            else if (errorCode == ErrorOperationAborted && cancelRequested)
            {
                completion.TrySetCanceled(token);
            }
            else if (errorCode == ErrorOperationAborted)
            {
                completion.TrySetException(new OperationCanceledException("the driver bridge was closed"));
            }
            else
            {
                completion.TrySetException(new Win32Exception((int)errorCode));
            }
        }
    }

    public async Task<PolicyPushResult> PushPolicyAsync(ReadOnlyMemory<byte> blob, CancellationToken cancellationToken)
    {
        if (blob.Length > MaxPolicyBytes)
        {
            return new PolicyPushResult(false, 2, $"too-long: {blob.Length} bytes, the driver takes at most {MaxPolicyBytes}", 0);
        }
        var result = new byte[8];
        await ControlAsync(IoctlSetPolicy, blob.ToArray(), result, cancellationToken).ConfigureAwait(false);
        int status = BitConverter.ToInt32(result);
        uint offset = BitConverter.ToUInt32(result.AsSpan(4));
        string name = status switch
        {
            0 => "ok",
            45 => "limit: the compiled policy is over the driver's arena cap",
            _ => $"status {status}",
        };
        return new PolicyPushResult(status == 0, status, name, offset);
    }

    public async Task<FirewallStatistics> GetStatisticsAsync(CancellationToken cancellationToken)
    {
        var buffer = new byte[Unsafe.SizeOf<NativeStats>()];
        await ControlAsync(IoctlGetStats, null, buffer, cancellationToken).ConfigureAwait(false);
        return FirewallStatistics.From(MemoryMarshal.Read<NativeStats>(buffer));
    }

    public Task SetLevelAsync(int level, CancellationToken cancellationToken) =>
        ControlAsync(IoctlSetLevel, BitConverter.GetBytes((uint)level), null, cancellationToken);

    public async IAsyncEnumerable<FirewallEvent> ReadEventsAsync([EnumeratorCancellation] CancellationToken cancellationToken)
    {
        int size = Unsafe.SizeOf<NativeEvent>();
        var buffer = new byte[size * 32];
        while (true)
        {
            // Pends in the driver until an event exists; cancelling the token cancels it there.
            uint got = await ControlAsync(IoctlWaitEvents, null, buffer, cancellationToken).ConfigureAwait(false);
            var events = new List<FirewallEvent>((int)(got / size));
            for (int at = 0; at + size <= got; at += size)
            {
                events.Add(ToEvent(MemoryMarshal.Read<NativeEvent>(buffer.AsSpan(at, size))));
            }
            foreach (var ev in events)
            {
                yield return ev;
            }
        }
    }

    private unsafe FirewallEvent ToEvent(NativeEvent n)
    {
        int length = Math.Min((int)n.PathLen, EventPathBytes);
        var prefix = new ReadOnlySpan<byte>(n.Path, length);
        string path = Encoding.UTF8.GetString(prefix);
        bool truncated = n.PathTruncated != 0;
        if (truncated && ProcessImages.TryGetFullImagePath(n.Pid, n.ProcessKey, prefix, processKey) is { } full)
        {
            path = full;
            truncated = false;
        }
        return NativeEventTuple.WithTuple(new FirewallEvent((FirewallEventType)n.Type, (DecisionReason)n.Reason, n.ProcessKey, n.Pid, path,
            n.RuleId, n.IdentityId, n.Value, NativeEventTuple.Address(n.Family, n.RemoteAddr), n.RemotePort)
        {
            PathTruncated = truncated,
        }, n);
    }

    public Task AttestAsync(ulong processKey, ReadOnlyMemory<byte> sha256, CancellationToken cancellationToken)
    {
        if (sha256.Length != 32)
        {
            throw new ArgumentException("a SHA-256 is 32 bytes", nameof(sha256));
        }
        var input = new byte[40];
        BitConverter.TryWriteBytes(input, processKey);
        sha256.Span.CopyTo(input.AsSpan(8));
        return ControlAsync(IoctlAttest, input, null, cancellationToken);
    }

    public Task BindServiceAsync(ulong processKey, string serviceName, CancellationToken cancellationToken)
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
        return ControlAsync(IoctlBindService, input, null, cancellationToken);
    }

    public async Task<BootFiltersResult> SetBootFiltersAsync(bool enabled, CancellationToken cancellationToken)
    {
        var reply = new byte[BootFilterMessages.ReplyBytes];
        uint returned;
        try
        {
            returned = await ControlAsync(IoctlSetBootFilters, BootFilterMessages.Request(enabled), reply, cancellationToken).ConfigureAwait(false);
        }
        catch (Win32Exception e) when (BootFilterMessages.Error(enabled, e.NativeErrorCode) is { } refused)
        {
            return refused;
        }
        return BootFilterMessages.Reply(enabled, reply, returned);
    }

    public Task<FirewallDecision> ExplainAsync(ConnectionQuery query, CancellationToken cancellationToken) =>
        throw new PlatformNotSupportedException("explain runs on the policy file through the core library (sieveq fw explain --policy)");

    /// <summary>Cancels whatever is still in the driver (the wait for events), waits for it to end, closes the handle.</summary>
    public async ValueTask DisposeAsync()
    {
        bool wait;
        lock (gate)
        {
            if (disposed)
            {
                return;
            }
            disposed = true;
            wait = outstanding > 0;
            if (!wait)
            {
                drained.TrySetResult();
            }
        }
        unsafe
        {
            CancelIoEx(device, null);
        }
        bool ended = true;
        if (wait)
        {
            try
            {
                await drained.Task.WaitAsync(TimeSpan.FromSeconds(5)).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
                ended = false;
            }
        }
        if (ended)
        {
            bound.Dispose();
        }
        // Closing the handle also makes Windows cancel anything still pending (IRP_MJ_CLEANUP).
        device.Dispose();
    }
}
