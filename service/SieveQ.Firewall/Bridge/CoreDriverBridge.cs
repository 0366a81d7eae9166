using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Text;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Firewall.Diagnostics;

namespace SieveQ.Firewall.Bridge;

/// <summary>
/// The driver's core hosted in-process through libsieveqfw.so. On Linux this is how the agent's
/// behaviour (push, statistics, events, explain) is exercised end to end; the extra members
/// (Authorize, flows, packets) stand in for what WFP calls in the kernel.
/// </summary>
public sealed class CoreDriverBridge : IDriverBridge
{
    private readonly IntPtr host;
    private readonly ILogger logger;
    private readonly Stopwatch clock = Stopwatch.StartNew();
    private readonly TimeSpan eventPoll;
    private int disposed;

    public CoreDriverBridge(ILogger<CoreDriverBridge>? logger = null, TimeSpan? eventPoll = null)
    {
        NativeCore.InstallResolver();
        this.logger = (ILogger?)logger ?? NullLogger.Instance;
        this.eventPoll = eventPoll ?? TimeSpan.FromMilliseconds(50);
        var limits = new NativeLimits
        {
            MaxFlows = 65536,
            MaxSynSlots = 65536,
            MaxAttest = 4096,
            MaxServices = 1024,
            MaxEvents = 4096,
            Seed = (ulong)Random.Shared.NextInt64(),
        };
        host = NativeCore.HostOpen(limits);
        if (host == IntPtr.Zero)
        {
            throw new InvalidOperationException("libsieveqfw refused the engine limits");
        }
    }

    /// <summary>Nanoseconds since this bridge started; the core's notion of now.</summary>
    public ulong NowNs => (ulong)clock.Elapsed.Ticks * 100;

    public static uint AbiVersion
    {
        get
        {
            NativeCore.InstallResolver();
            return NativeCore.AbiVersion();
        }
    }

    /// <summary>Validates a blob exactly as the driver would, without installing it.</summary>
    public static unsafe PolicyPushResult Check(ReadOnlySpan<byte> blob)
    {
        NativeCore.InstallResolver();
        fixed (byte* p = blob)
        {
            int rc = NativeCore.PolicyCheck(p, (nuint)blob.Length, out uint offset);
            return new PolicyPushResult(rc == 0, rc, NativeCore.StatusText(rc), offset);
        }
    }

    public Task<PolicyPushResult> PushPolicyAsync(ReadOnlyMemory<byte> blob, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        PolicyPushResult result;
        unsafe
        {
            fixed (byte* p = blob.Span)
            {
                int rc = NativeCore.HostSetPolicy(Handle, p, (nuint)blob.Length, NowNs, out uint offset);
                result = new PolicyPushResult(rc == 0, rc, NativeCore.StatusText(rc), offset);
            }
        }
        FirewallMetrics.PolicyPushes.Add(1, new KeyValuePair<string, object?>("accepted", result.Accepted));
        if (result.Accepted)
        {
            logger.LogInformation("Policy installed ({Bytes} bytes)", blob.Length);
        }
        else
        {
            logger.LogWarning("Policy rejected: {Status} at offset {Offset}", result.StatusName, result.ErrorOffset);
        }
        return Task.FromResult(result);
    }

    public Task<FirewallStatistics> GetStatisticsAsync(CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        NativeCore.HostStats(Handle, out NativeStats s);
        return Task.FromResult(FirewallStatistics.From(s));
    }

    public Task SetLevelAsync(int level, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        int rc = level < 0 ? -1 : NativeCore.HostSetLevel(Handle, (uint)level, NowNs);
        if (rc != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(level), level, "the policy has no such hierarchy level");
        }
        return Task.CompletedTask;
    }

    public async IAsyncEnumerable<FirewallEvent> ReadEventsAsync([EnumeratorCancellation] CancellationToken cancellationToken)
    {
        while (!cancellationToken.IsCancellationRequested)
        {
            if (TryTakeEvent(out FirewallEvent? ev))
            {
                yield return ev!;
                continue;
            }
            try
            {
                await Task.Delay(eventPoll, cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                yield break;
            }
        }
    }

    public bool TryTakeEvent(out FirewallEvent? ev)
    {
        if (NativeCore.HostNextEvent(Handle, out NativeEvent n) == 0)
        {
            ev = null;
            return false;
        }
        ev = Convert(n);
        FirewallMetrics.Events.Add(1, new KeyValuePair<string, object?>("type", ev.Type.ToString()));
        return true;
    }

    public Task AttestAsync(ulong processKey, ReadOnlyMemory<byte> sha256, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        if (sha256.Length != 32)
        {
            throw new ArgumentException("SHA-256 digests are 32 bytes", nameof(sha256));
        }
        unsafe
        {
            fixed (byte* p = sha256.Span)
            {
                Require(NativeCore.HostAttest(Handle, processKey, p, NowNs), "attest");
            }
        }
        return Task.CompletedTask;
    }

    public Task BindServiceAsync(ulong processKey, string serviceName, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        byte[] name = Encoding.UTF8.GetBytes(serviceName);
        unsafe
        {
            fixed (byte* p = name)
            {
                Require(NativeCore.HostServiceBind(Handle, processKey, p, (uint)name.Length), "bind service");
            }
        }
        return Task.CompletedTask;
    }

    public Task<FirewallDecision> ExplainAsync(ConnectionQuery query, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        return Task.FromResult(Decide(query, explain: true));
    }

    /// <summary>
    /// The request is checked by the driver's own request check in the core, byte for byte as the driver would. This
    /// host has no WFP and no BFE: nothing here is enforced before the agent starts, so "on" is refused as not on this
    /// platform rather than reported as stored, and "off" is what this host already is.
    /// </summary>
    public Task<BootFiltersResult> SetBootFiltersAsync(bool enabled, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        ObjectDisposedException.ThrowIf(Volatile.Read(ref disposed) != 0, this);
        return Task.FromResult(CheckBootFilters(BootFilterMessages.Request(enabled)));
    }

    /// <summary>What this twin answers to a raw IOCTL_SQFW_SET_BOOT_FILTERS request.</summary>
    internal static unsafe BootFiltersResult CheckBootFilters(ReadOnlySpan<byte> request)
    {
        NativeCore.InstallResolver();
        uint enable;
        int wellFormed;
        fixed (byte* p = request)
        {
            wellFormed = NativeCore.BootRequestCheck(p, (nuint)request.Length, out enable);
        }
        if (wellFormed == 0)
        {
            return BootFilterMessages.Error(false, BootFilterMessages.ErrorInvalidParameter)!;
        }
        return enable == 0
            ? new BootFiltersResult(false, BootFilterFailure.None, 0, 0, "no boot-time filters on this host (it has no WFP)")
            : BootFilterMessages.Failed(true, BootFilterFailure.NotOnThisPlatform, 0,
                "boot-time filters need the Windows WFP driver; this host has none, so nothing is enforced before the agent starts");
    }

    /// <summary>What the ALE connect / recv-accept callout does for this attempt (charges buckets).</summary>
    public FirewallDecision Authorize(ConnectionQuery query) => Decide(query, explain: false);

    public void FlowEstablished(ulong flowId, ConnectionQuery query)
    {
        WithRequest(query, (in NativeRequest r) =>
        {
            Require(NativeCore.HostFlowEstablished(Handle, flowId, r, NowNs), "flow established");
            return 0;
        });
    }

    public void FlowDeleted(ulong flowId) => Require(NativeCore.HostFlowDeleted(Handle, flowId), "flow delete");

    public FirewallDecision Packet(ulong flowId, uint bytes)
    {
        Require(NativeCore.HostPacket(Handle, flowId, bytes, NowNs, out NativeDecision d), "packet");
        return Convert(d);
    }

    public void Tick() => NativeCore.HostTick(Handle, NowNs);

    /// <summary>Pends that can be completed now: (slot, expired, verdict on time-out).</summary>
    public IReadOnlyList<(uint Slot, bool Expired, Verdict OnTimeout)> TakeReadyPends()
    {
        var ready = new List<(uint, bool, Verdict)>();
        while (NativeCore.HostPendTakeReady(Handle, NowNs, out uint slot, out uint verdict, out uint expired) != 0)
        {
            ready.Add((slot, expired != 0, (Verdict)verdict));
        }
        return ready;
    }

    private delegate int RequestAction(in NativeRequest request);

    private FirewallDecision Decide(ConnectionQuery query, bool explain)
    {
        NativeDecision decision = default;
        WithRequest(query, (in NativeRequest r) =>
        {
            int rc = explain
                ? NativeCore.HostExplain(Handle, r, NowNs, out decision)
                : NativeCore.HostAuthorize(Handle, r, NowNs, out decision);
            Require(rc, explain ? "explain" : "authorize");
            return rc;
        });
        return Convert(decision);
    }

    private static unsafe void WithRequest(ConnectionQuery q, RequestAction action)
    {
        byte[] path = Encoding.UTF8.GetBytes(q.ImagePath);
        byte[]? service = q.Service is null ? null : Encoding.UTF8.GetBytes(q.Service);
        byte[]? user = q.User is null ? null : Encoding.UTF8.GetBytes(q.User);
        byte[] remote = q.Remote.GetAddressBytes();
        fixed (byte* pPath = path)
        fixed (byte* pService = service)
        fixed (byte* pUser = user)
        {
            var r = new NativeRequest
            {
                ProcessKey = q.ProcessKey,
                Path = pPath,
                PathLen = (uint)path.Length,
                Service = pService,
                ServiceLen = (uint)(service?.Length ?? 0),
                User = pUser,
                UserLen = (uint)(user?.Length ?? 0),
                Pid = q.ProcessId,
                Direction = (byte)q.Direction,
                Protocol = q.Protocol,
                Family = q.Remote.AddressFamily == AddressFamily.InterNetwork ? (byte)4 : (byte)6,
                Flags = (byte)((q.Loopback ? 1 : 0) | (q.Reauthorization ? 2 : 0)),
                LocalPort = q.Direction == ConnectionDirection.Inbound ? q.Port : q.LocalPort,
                RemotePort = q.Direction == ConnectionDirection.Outbound ? q.Port : (ushort)0,
            };
            for (int i = 0; i < remote.Length && i < 16; i++)
            {
                r.RemoteAddr[i] = remote[i];
            }
            action(in r);
        }
    }

    private static FirewallDecision Convert(in NativeDecision d) => new(
        (Verdict)d.Verdict, (DecisionReason)d.Reason, d.RuleId, d.IdentityId, d.ClassId, d.Level,
        (d.Flags & 1) != 0, d.PendSlot, TimeSpan.FromTicks((long)(d.WaitNs / 100)));

    private static unsafe FirewallEvent Convert(in NativeEvent n)
    {
        string path;
        IPAddress? remote = null;
        fixed (byte* p = n.Path)
        {
            path = Encoding.UTF8.GetString(p, Math.Min((int)n.PathLen, 256));
        }
        fixed (byte* a = n.RemoteAddr)
        {
            remote = NativeEventTuple.Address(n.Family, a);
        }
        return NativeEventTuple.WithTuple(new FirewallEvent((FirewallEventType)n.Type, (DecisionReason)n.Reason, n.ProcessKey, n.Pid, path,
            n.RuleId, n.IdentityId, n.Value, remote, n.RemotePort)
        {
            PathTruncated = n.PathTruncated != 0,
        }, n);
    }

    private static void Require(int rc, string what)
    {
        if (rc != 0)
        {
            throw new InvalidOperationException($"core {what} failed: {NativeCore.StatusText(rc)}");
        }
    }

    private IntPtr Handle
    {
        get
        {
            ObjectDisposedException.ThrowIf(Volatile.Read(ref disposed) != 0, this);
            return host;
        }
    }

    public ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref disposed, 1) == 0)
        {
            NativeCore.HostClose(host);
        }
        return ValueTask.CompletedTask;
    }
}
