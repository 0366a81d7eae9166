using System.Text.Json;
using System.Text.Json.Serialization;

namespace SieveQ.Firewall.Policy;

/// <summary>The endpoint section of a SieveQ policy: what layer 0 enforces on one host.</summary>
public sealed record EndpointPolicy
{
    public ulong Serial { get; init; }
    /// <summary>"enforce" or "audit".</summary>
    public string Mode { get; init; } = "enforce";
    public PendingSettings Pending { get; init; } = new();
    /// <summary>"allow" (every process may use loopback) or "enforce".</summary>
    public string Loopback { get; init; } = "allow";
    /// <summary>"rules" or "allow-client-service".</summary>
    public string Dns { get; init; } = "rules";
    /// <summary>"block" or "pend-for-hash" (needed for hash-only applications).</summary>
    public string UnknownImage { get; init; } = "block";
    public int InitialLevel { get; init; }
    public IReadOnlyList<TrafficClass> Classes { get; init; } = [];
    public IReadOnlyList<Application> Applications { get; init; } = [];
    public SynLimits? SynLimits { get; init; }
    public IReadOnlyList<HierarchyLevel> Hierarchy { get; init; } = [];

    private static readonly JsonSerializerOptions JsonOptions = new()
    {
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        ReadCommentHandling = JsonCommentHandling.Skip,
        AllowTrailingCommas = true,
        UnmappedMemberHandling = JsonUnmappedMemberHandling.Disallow,
    };

    public static EndpointPolicy Parse(string json)
    {
        try
        {
            return JsonSerializer.Deserialize<EndpointPolicy>(json, JsonOptions)
                ?? throw new PolicyException("policy document is empty");
        }
        catch (JsonException e)
        {
            throw new PolicyException($"policy JSON is invalid: {e.Message}", e);
        }
    }

    public static async Task<EndpointPolicy> LoadAsync(string path, CancellationToken cancellationToken)
    {
        string json = await File.ReadAllTextAsync(path, cancellationToken).ConfigureAwait(false);
        return Parse(json);
    }
}

public sealed record PendingSettings
{
    public int MaxPended { get; init; } = 64;
    public int TimeoutMs { get; init; } = 2000;
    /// <summary>"block" (fail closed) or "allow" (fail open).</summary>
    public string OnTimeout { get; init; } = "block";
}

public sealed record TrafficClass
{
    public string Name { get; init; } = "";
    public int Id { get; init; }
    public uint Weight { get; init; } = 1;
    public uint PacketsPerSecond { get; init; }
    public uint PacketBurst { get; init; }
    public uint BytesPerSecond { get; init; }
    public uint ByteBurst { get; init; }
    public uint ConnectionsPerSecond { get; init; }
    public uint ConnectionBurst { get; init; }
}

public sealed record Application
{
    public uint? Id { get; init; }
    /// <summary>NT image path as the driver sees it (\device\harddiskvolumeN\...).</summary>
    public string? Path { get; init; }
    /// <summary>Hex SHA-256 of the image. With a path: both must match; alone: any path.</summary>
    public string? Sha256 { get; init; }
    /// <summary>Service name for services hosted in svchost.</summary>
    public string? Service { get; init; }
    /// <summary>Textual user SID the process must run as.</summary>
    public string? User { get; init; }
    public string Class { get; init; } = "default";
    public uint ConnectionsPerSecond { get; init; }
    public uint ConnectionBurst { get; init; }
    public IReadOnlyList<AllowRule> Allow { get; init; } = [];
}

public sealed record AllowRule
{
    public uint? Id { get; init; }
    /// <summary>"any", an address, or a prefix such as 10.0.0.0/8 or 2001:db8::/32.</summary>
    public string Remote { get; init; } = "any";
    /// <summary>"any", "tcp", "udp", "icmp", "icmpv6" or a protocol number.</summary>
    public string Protocol { get; init; } = "tcp";
    /// <summary>"any", "443" or "5000-6000"; the remote port outbound, the local port inbound.</summary>
    public string Ports { get; init; } = "any";
    /// <summary>"out", "in" or "both".</summary>
    public string Direction { get; init; } = "out";
    /// <summary>Class for this rule's traffic; the application's when absent.</summary>
    public string? Class { get; init; }
}

public sealed record SynLimits
{
    public uint PerSourcePerSecond { get; init; } = 10;
    public uint PerSourceBurst { get; init; } = 20;
    public uint UnprovenPerSecond { get; init; }
    public uint UnprovenBurst { get; init; }
    public uint TableSlots { get; init; } = 65536;
    public int Ipv4Prefix { get; init; } = 32;
    public int Ipv6Prefix { get; init; } = 64;
}

public sealed record HierarchyLevel
{
    public IReadOnlyList<string> Admit { get; init; } = [];
    public uint PacketsPerSecond { get; init; }
    public uint ConnectionsPerSecond { get; init; }
}

public sealed class PolicyException : Exception
{
    public PolicyException(string message) : base(message) { }
    public PolicyException(string message, Exception inner) : base(message, inner) { }
    public PolicyException() { }
}
