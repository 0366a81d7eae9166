using System.Buffers.Binary;
using SieveQ.Firewall.Bridge;
using SieveQ.Firewall.Policy;

namespace SieveQ.Firewall.Tests;

public class PolicyRejectionTests
{
    private static EndpointPolicy Workstation() =>
        EndpointPolicy.Parse(File.ReadAllText(Path.Combine(NativeLibraryFixture.GoldenDirectory, "workstation.json")));

    private static EndpointPolicy WithRule(AllowRule rule)
    {
        var p = Workstation();
        var apps = p.Applications.ToList();
        apps[1] = apps[1] with { Allow = [rule] };
        return p with { Applications = apps };
    }

    [Theory]
    [InlineData("10.0.0.1/8", "tcp", "443", "out", "host bits")]
    [InlineData("10.0.0.0/33", "tcp", "443", "out", "prefix length")]
    [InlineData("not-an-address", "tcp", "443", "out", "not an address")]
    [InlineData("10.0.0.0/8", "tcp", "9000-80", "out", "reversed")]
    [InlineData("10.0.0.0/8", "icmp", "443", "out", "ports apply only")]
    [InlineData("10.0.0.0/8", "sctp", "any", "out", "unknown protocol")]
    [InlineData("10.0.0.0/8", "tcp", "443", "sideways", "direction")]
    public void Malformed_rules_are_rejected(string remote, string protocol, string ports, string direction, string reason)
    {
        var policy = WithRule(new AllowRule { Remote = remote, Protocol = protocol, Ports = ports, Direction = direction });
        var e = Assert.Throws<PolicyException>(() => PolicyCompiler.Compile(policy));
        Assert.Contains(reason, e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Unknown_class_duplicate_ids_and_paths_are_rejected()
    {
        var p = Workstation();
        Assert.Contains("unknown class", Assert.Throws<PolicyException>(() =>
            PolicyCompiler.Compile(p with { Applications = [p.Applications[0] with { Class = "gold" }] })).Message, StringComparison.Ordinal);
        Assert.Contains("duplicate application id", Assert.Throws<PolicyException>(() =>
            PolicyCompiler.Compile(p with { Applications = [p.Applications[0], p.Applications[1] with { Id = 1 }] })).Message, StringComparison.Ordinal);
        var twin = p.Applications[1] with { Id = 9, Path = p.Applications[1].Path!.ToUpperInvariant(), Allow = [] };
        Assert.Contains("duplicate application path", Assert.Throws<PolicyException>(() =>
            PolicyCompiler.Compile(p with { Applications = [.. p.Applications, twin] })).Message, StringComparison.Ordinal);
        Assert.Contains("a rate needs a burst", Assert.Throws<PolicyException>(() =>
            PolicyCompiler.Compile(p with { Classes = [p.Classes[0] with { ConnectionsPerSecond = 5 }, .. p.Classes.Skip(1)] })).Message, StringComparison.Ordinal);
        Assert.Throws<PolicyException>(() => EndpointPolicy.Parse("{\"serial\": 1, \"surprise\": true}"));
    }

    [Fact]
    public void Driver_parser_rejects_damaged_blobs_with_code_and_offset()
    {
        NativeLibraryFixture.EnsureLoaded();
        byte[] blob = PolicyCompiler.Compile(Workstation());
        Assert.True(CoreDriverBridge.Check(blob).Accepted);

        byte[] flipped = (byte[])blob.Clone();
        flipped[^20] ^= 0x10;
        var r = CoreDriverBridge.Check(flipped);
        Assert.False(r.Accepted);
        Assert.Equal("bad-checksum", r.StatusName);
        Assert.Equal(24u, r.ErrorOffset);

        byte[] truncated = blob[..100];
        Assert.Equal("length-mismatch", CoreDriverBridge.Check(truncated).StatusName);
    }

    [Fact]
    public async Task Non_monotonic_hierarchy_is_refused_and_the_running_policy_stays()
    {
        NativeLibraryFixture.EnsureLoaded();
        await using var bridge = new CoreDriverBridge();
        var good = Workstation();
        Assert.True((await bridge.PushPolicyAsync(PolicyCompiler.Compile(good), CancellationToken.None)).Accepted);

        // level 2 admits more than level 1: the C# compiler writes it, the driver refuses it
        var levels = good.Hierarchy.ToList();
        levels[1] = levels[1] with { Admit = ["default"] };
        var bad = good with { Serial = 43, Hierarchy = levels };
        var result = await bridge.PushPolicyAsync(PolicyCompiler.Compile(bad), CancellationToken.None);

        Assert.False(result.Accepted);
        Assert.Equal("bad-levels", result.StatusName);
        var stats = await bridge.GetStatisticsAsync(CancellationToken.None);
        Assert.Equal(42ul, stats.PolicySerial);
    }

    [Fact]
    public void Checksum_covers_the_whole_blob()
    {
        byte[] blob = PolicyCompiler.Compile(Workstation());
        uint stored = BinaryPrimitives.ReadUInt32LittleEndian(blob.AsSpan(24));
        BinaryPrimitives.WriteUInt32LittleEndian(blob.AsSpan(24), 0);
        Assert.Equal(stored, Crc32.Compute(blob));
    }
}
