using System.Net;
using SieveQ.Firewall.Identity;

namespace SieveQ.Firewall.Bridge;

public enum Verdict
{
    Allow = 1,
    Block = 2,
    Pend = 3,
    Defer = 4,
}

/// <summary>Why the core decided; values of sqfw_reason in driver/core/sqfw.h.</summary>
public enum DecisionReason
{
    None = 0,
    Rule = 1,
    NoRule = 2,
    UnknownApp = 3,
    NeedsHash = 4,
    HashMismatch = 5,
    UserMismatch = 6,
    Loopback = 7,
    DnsClient = 8,
    Level = 9,
    ClassRate = 10,
    AppRate = 11,
    SynSource = 12,
    SynUnproven = 13,
    PendFull = 14,
    PendTimeout = 15,
    NoPolicy = 16,
    Shaped = 17,
    FlowUnknown = 18,
    Pass = 19,
}

public enum ConnectionDirection
{
    Outbound = 1,
    Inbound = 2,
}

public enum FirewallEventType
{
    Blocked = 1,
    NewIdentity = 2,
    Audit = 3,
    Level = 4,
    Policy = 5,

    /// <summary>A connection was allowed (the driver's connection log, within its budget).</summary>
    Allowed = 6,

    /// <summary>A connection was dropped by a rate, level or SYN limit; the reason says which (budgeted).</summary>
    RateLimited = 7,
}

/// <summary>A connection attempt as the ALE layers see it.</summary>
public sealed record ConnectionQuery
{
    public required string ImagePath { get; init; }
    public required IPAddress Remote { get; init; }
    public ushort Port { get; init; }
    public ushort LocalPort { get; init; }
    public byte Protocol { get; init; } = 6;
    public ConnectionDirection Direction { get; init; } = ConnectionDirection.Outbound;
    public string? Service { get; init; }
    public string? User { get; init; }
    public ulong ProcessKey { get; init; } = 1;
    public uint ProcessId { get; init; }
    public bool Loopback { get; init; }
    public bool Reauthorization { get; init; }
}

public sealed record FirewallDecision(Verdict Verdict, DecisionReason Reason, uint RuleId, uint IdentityId, uint ClassId,
    uint Level, bool Audited, uint PendSlot, TimeSpan Wait);

public sealed record PolicyPushResult(bool Accepted, int Status, string StatusName, uint ErrorOffset);

public sealed record FirewallStatistics
{
    public ulong PolicySerial { get; init; }
    public ulong Authorized { get; init; }
    public ulong Allowed { get; init; }
    public ulong Blocked { get; init; }
    public ulong Pended { get; init; }
    public ulong PendTimeouts { get; init; }
    public ulong Audited { get; init; }
    public ulong SynDropped { get; init; }
    public ulong RateLimited { get; init; }
    public ulong LevelDropped { get; init; }
    public ulong PacketsPassed { get; init; }
    public ulong PacketsDeferred { get; init; }
    public ulong EventsDropped { get; init; }
    public uint FlowsActive { get; init; }
    public uint Level { get; init; }
    public uint LevelCount { get; init; }
    public uint PolicyRules { get; init; }

    /// <summary>Processes the driver's process-notify table holds (0 for the shared library, which has none).</summary>
    public uint ProcessesTracked { get; init; }

    /// <summary>Single-service svchost instances among them, attributed to their service by the driver.</summary>
    public uint ProcessesServices { get; init; }

    /// <summary>Processes the full table dropped (none hosting a service) or could not take (a set full of services).</summary>
    public ulong ProcessesEvicted { get; init; }

    public ulong ProcessesRefused { get; init; }

    /// <summary>Connection-log events (allowed, rate-limited) over the driver's budget, counted instead of queued.</summary>
    public ulong EventsSuppressed { get; init; }

    internal static FirewallStatistics From(in NativeStats s) => new()
    {
        PolicySerial = s.PolicySerial,
        Authorized = s.Authorized,
        Allowed = s.Allowed,
        Blocked = s.Blocked,
        Pended = s.Pended,
        PendTimeouts = s.PendTimeouts,
        Audited = s.Audited,
        SynDropped = s.SynDropped,
        RateLimited = s.RateLimited,
        LevelDropped = s.LevelDropped,
        PacketsPassed = s.PacketsPassed,
        PacketsDeferred = s.PacketsDeferred,
        EventsDropped = s.EventsDropped,
        FlowsActive = s.FlowsActive,
        Level = s.Level,
        LevelCount = s.LevelCount,
        PolicyRules = s.PolicyRules,
        ProcessesTracked = s.ProcessesTracked,
        ProcessesServices = s.ProcessesServices,
        ProcessesEvicted = s.ProcessesEvicted,
        ProcessesRefused = s.ProcessesRefused,
        EventsSuppressed = s.EventsSuppressed,
    };
}

public sealed record FirewallEvent(FirewallEventType Type, DecisionReason Reason, ulong ProcessKey, uint ProcessId,
    string ImagePath, uint RuleId, uint IdentityId, uint Value, IPAddress? Remote, ushort RemotePort)
{
    /// <summary>
    /// ImagePath is only the first 256 bytes the driver's event carries, and the bridge could not recover the
    /// rest from the process itself: hashing it would hash some other file.
    /// </summary>
    public bool PathTruncated { get; init; }

    /// <summary>The connection's local end (null for events that are not about a connection).</summary>
    public IPAddress? Local { get; init; }

    public ushort LocalPort { get; init; }

    /// <summary>The textual SID of the connection's user; empty when the driver did not know it.</summary>
    public string User { get; init; } = string.Empty;

    public uint ClassId { get; init; }

    /// <summary>NEW_IDENTITY: the image file the process mapped, as the driver's create notify saw it; null when unknown.</summary>
    public MappedImage? MappedImage { get; init; }
}
