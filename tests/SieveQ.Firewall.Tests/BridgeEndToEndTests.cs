using System.Net;
using System.Security.Cryptography;
using System.Text;
using SieveQ.Firewall.Bridge;
using SieveQ.Firewall.Policy;

namespace SieveQ.Firewall.Tests;

/// <summary>The agent's side against the real core through libsieveqfw.so.</summary>
public class BridgeEndToEndTests
{
    private const string Agent = @"\device\harddiskvolume2\program files\sieveq\agent.exe";
    private const string Curl = @"\device\harddiskvolume2\windows\system32\curl.exe";
    private const string Sid = "S-1-5-21-1000-1000-1000-1001";

    private static async Task<CoreDriverBridge> OpenWithWorkstationAsync()
    {
        NativeLibraryFixture.EnsureLoaded();
        var bridge = new CoreDriverBridge(eventPoll: TimeSpan.FromMilliseconds(5));
        var policy = await EndpointPolicy.LoadAsync(Path.Combine(NativeLibraryFixture.GoldenDirectory, "workstation.json"), CancellationToken.None);
        var pushed = await bridge.PushPolicyAsync(PolicyCompiler.Compile(policy), CancellationToken.None);
        Assert.True(pushed.Accepted, pushed.StatusName);
        while (bridge.TryTakeEvent(out _))
        {
        }
        return bridge;
    }

    [Fact]
    public async Task Push_then_statistics_report_the_policy()
    {
        await using var bridge = await OpenWithWorkstationAsync();
        var stats = await bridge.GetStatisticsAsync(CancellationToken.None);
        Assert.Equal(42ul, stats.PolicySerial);
        Assert.Equal(7u, stats.PolicyRules);
        Assert.Equal(3u, stats.LevelCount);
        Assert.Equal(1u, CoreDriverBridge.AbiVersion);
    }

    [Fact]
    public async Task Explain_names_the_deciding_rule_without_charging()
    {
        await using var bridge = await OpenWithWorkstationAsync();
        var query = new ConnectionQuery { ImagePath = Curl, User = Sid, Remote = IPAddress.Parse("93.184.216.34"), Port = 443 };
        for (int i = 0; i < 20; i++)
        {
            var d = await bridge.ExplainAsync(query, CancellationToken.None);
            Assert.Equal(Verdict.Allow, d.Verdict);
            Assert.Equal(5u, d.RuleId);
            Assert.Equal(2u, d.ClassId);
        }
        Assert.Equal(0ul, (await bridge.GetStatisticsAsync(CancellationToken.None)).Authorized);
        var blocked = await bridge.ExplainAsync(query with { Port = 22 }, CancellationToken.None);
        Assert.Equal(Verdict.Block, blocked.Verdict);
        Assert.Equal(DecisionReason.NoRule, blocked.Reason);
    }

    [Fact]
    public async Task New_image_pends_agent_hashes_and_answers_then_reauthorisation_allows()
    {
        await using var bridge = await OpenWithWorkstationAsync();
        var query = new ConnectionQuery { ImagePath = Agent, Remote = IPAddress.Parse("10.20.7.7"), Port = 443, ProcessKey = 77, ProcessId = 4321 };

        var first = bridge.Authorize(query);
        Assert.Equal(Verdict.Pend, first.Verdict);

        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        FirewallEvent? newIdentity = null;
        await foreach (var ev in bridge.ReadEventsAsync(cts.Token))
        {
            newIdentity = ev;
            break;
        }
        Assert.NotNull(newIdentity);
        Assert.Equal(FirewallEventType.NewIdentity, newIdentity!.Type);
        Assert.Equal(Agent, newIdentity.ImagePath);
        Assert.Equal(77ul, newIdentity.ProcessKey);
        Assert.Equal(first.PendSlot, newIdentity.Value);

        // the agent would hash the image file; the golden policy pins SHA-256("agent")
        byte[] sha = SHA256.HashData(Encoding.ASCII.GetBytes("agent"));
        await bridge.AttestAsync(77, sha, CancellationToken.None);
        var ready = bridge.TakeReadyPends();
        Assert.Single(ready);
        Assert.Equal(first.PendSlot, ready[0].Slot);
        Assert.False(ready[0].Expired);

        var again = bridge.Authorize(query with { Reauthorization = true });
        Assert.Equal(Verdict.Allow, again.Verdict);
        Assert.Equal(1u, again.RuleId);
    }

    [Fact]
    public async Task Blocked_connections_and_level_switches_reach_the_event_stream()
    {
        await using var bridge = await OpenWithWorkstationAsync();
        var evil = new ConnectionQuery { ImagePath = @"\device\x\evil.exe", Remote = IPAddress.Parse("6.6.6.6"), Port = 4444, ProcessKey = 9 };
        Assert.Equal(Verdict.Block, bridge.Authorize(evil).Verdict);
        await bridge.SetLevelAsync(2, CancellationToken.None);
        var curl = new ConnectionQuery { ImagePath = Curl, User = Sid, Remote = IPAddress.Parse("1.2.3.4"), Port = 443 };
        var atLevel2 = bridge.Authorize(curl);
        Assert.Equal(DecisionReason.Level, atLevel2.Reason);

        var seen = new List<FirewallEvent>();
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        await foreach (var ev in bridge.ReadEventsAsync(cts.Token))
        {
            seen.Add(ev);
            if (seen.Count == 2)
            {
                break;
            }
        }
        Assert.Equal(FirewallEventType.Blocked, seen[0].Type);
        Assert.Equal(DecisionReason.UnknownApp, seen[0].Reason);
        Assert.Equal(IPAddress.Parse("6.6.6.6"), seen[0].Remote);
        Assert.Equal(FirewallEventType.Level, seen[1].Type);
        Assert.Equal(2u, seen[1].Value);

        var stats = await bridge.GetStatisticsAsync(CancellationToken.None);
        Assert.Equal(2ul, stats.Blocked);
        Assert.Equal(1ul, stats.LevelDropped);
        Assert.Equal(2u, stats.Level);
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => bridge.SetLevelAsync(3, CancellationToken.None));
    }

    [Fact]
    public async Task Allowed_connections_and_rate_drops_are_logged_with_their_tuple_and_user()
    {
        await using var bridge = await OpenWithWorkstationAsync();
        var curl = new ConnectionQuery
        {
            ImagePath = Curl, User = Sid, Remote = IPAddress.Parse("1.2.3.4"), Port = 443, LocalPort = 50123, ProcessId = 4321,
        };
        Assert.Equal(Verdict.Allow, bridge.Authorize(curl).Verdict);
        DecisionReason reason;
        do
        {
            reason = bridge.Authorize(curl).Reason; // curl's class admits a burst of 5
        }
        while (reason == DecisionReason.Rule);
        Assert.Equal(DecisionReason.ClassRate, reason);

        FirewallEvent? allowed = null, dropped = null;
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        await foreach (var ev in bridge.ReadEventsAsync(cts.Token))
        {
            allowed ??= ev.Type == FirewallEventType.Allowed ? ev : null;
            dropped ??= ev.Type == FirewallEventType.RateLimited ? ev : null;
            if (allowed is not null && dropped is not null)
            {
                break;
            }
        }
        Assert.NotNull(allowed);
        Assert.Equal(Sid, allowed.User);
        Assert.Equal(50123, allowed.LocalPort);
        Assert.Equal(443, allowed.RemotePort);
        Assert.Equal(IPAddress.Parse("1.2.3.4"), allowed.Remote);
        Assert.Equal(Curl, allowed.ImagePath);
        Assert.Equal(4321u, allowed.ProcessId);
        Assert.NotNull(dropped);
        Assert.Equal(DecisionReason.ClassRate, dropped.Reason);
        Assert.Equal(Sid, dropped.User);
        Assert.Equal(0ul, (await bridge.GetStatisticsAsync(CancellationToken.None)).EventsSuppressed);
    }

    [Fact]
    public async Task Flows_are_shaped_by_their_class()
    {
        await using var bridge = await OpenWithWorkstationAsync();
        var curl = new ConnectionQuery { ImagePath = Curl, User = Sid, Remote = IPAddress.Parse("1.2.3.4"), Port = 443 };
        bridge.FlowEstablished(5, curl);
        int passed = 0, deferred = 0;
        for (int i = 0; i < 300; i++)
        {
            var d = bridge.Packet(5, 100);
            if (d.Verdict == Verdict.Allow)
            {
                passed++;
            }
            else if (d.Verdict == Verdict.Defer)
            {
                deferred++;
                Assert.True(d.Wait > TimeSpan.Zero);
            }
        }
        // class "bulk": burst of 100 packets, 1000/s; the loop takes far less than 100 ms
        Assert.InRange(passed, 100, 199);
        Assert.Equal(300 - passed, deferred);
        Assert.Equal(1u, (await bridge.GetStatisticsAsync(CancellationToken.None)).FlowsActive);
        bridge.FlowDeleted(5);
        Assert.Equal(0u, (await bridge.GetStatisticsAsync(CancellationToken.None)).FlowsActive);
    }
}
