using SieveQ.Policy.Hosting;
using System.Globalization;
using System.Text.Json.Nodes;
using Microsoft.Extensions.Logging;

namespace SieveQ.Policy.Tests;

public sealed class PolicyMonitorTests : IDisposable
{
    private readonly PolicyFolder folder = new();
    private readonly ListLogger<PolicyMonitor> logger = new();

    public void Dispose() => folder.Dispose();

    private PolicyMonitor Monitor(JsonFilePolicySource source) =>
        new(source, logger, settleDelay: TimeSpan.FromMilliseconds(50));

    [Fact]
    public void A_good_policy_file_is_applied()
    {
        folder.Write(PolicyJson.Valid("audit"));
        using var source = new JsonFilePolicySource(folder.FilePath);
        using var monitor = Monitor(source);
        using var applied = new CounterProbe("sieveq.policy.applied", source.Name);

        var evaluation = monitor.Refresh();

        Assert.True(evaluation.IsValid, string.Join("; ", evaluation.Errors));
        Assert.Equal(1, monitor.Current.Generation);
        Assert.Equal(DriverMode.Audit, monitor.Policy.DriverMode);
        Assert.Single(monitor.Policy.ApplicationWhitelist);
        Assert.Equal(source.Name, monitor.Current.Source);
        Assert.Null(monitor.ActiveAlarm);
        Assert.Equal(1, applied.Total);
    }

    [Fact]
    public void A_missing_file_means_nothing_is_configured()
    {
        using var source = new JsonFilePolicySource(folder.FilePath);
        using var monitor = Monitor(source);

        Assert.True(monitor.Refresh().IsValid);
        Assert.Equal(AgentPolicy.NotConfigured, monitor.Policy);
    }

    public static TheoryData<string, string> InvalidEdits => new()
    {
        { "bad enum", "DriverMode: 'enforcee' is not one of audit, enforce" },
        { "malformed JSON", "the policy file is not valid JSON" },
        { "too long list", "PreSqEndpoints: 65 entries, at most 64 are allowed" },
        { "truncated file", "the policy file is not valid JSON" },
        { "empty file", "the policy file is empty" },
        { "oversized file", "at most 1048576 are read" },
        { "one bad value among good ones", "ApplicationWhitelist\\C:\\new.exe: 'zz' is not a SHA-256" },
    };

    [Theory]
    [MemberData(nameof(InvalidEdits))]
    public void An_invalid_edit_keeps_the_previous_policy_and_raises_the_alarm(string edit, string expected)
    {
        folder.Write(PolicyJson.Valid("audit"));
        using var source = new JsonFilePolicySource(folder.FilePath);
        using var monitor = Monitor(source);
        using var rejected = new CounterProbe("sieveq.policy.rejected", source.Name);
        var alarms = new List<PolicyRejectedEventArgs>();
        monitor.Rejected += (_, e) => alarms.Add(e);
        monitor.Refresh();
        var good = monitor.Current;

        File.WriteAllText(folder.FilePath, BadContent(edit));
        var evaluation = monitor.Refresh();

        Assert.False(evaluation.IsValid);
        Assert.Same(good, monitor.Current);
        Assert.Equal(DriverMode.Audit, monitor.Policy.DriverMode);
        Assert.Single(monitor.Policy.ApplicationWhitelist);
        var alarm = Assert.Single(alarms);
        Assert.Contains(alarm.Errors, e => e.Contains(expected, StringComparison.Ordinal));
        Assert.Same(good, alarm.InForce);
        Assert.Same(alarm, monitor.ActiveAlarm);
        Assert.Contains(logger.Entries, e => e.Level == LogLevel.Error && e.Message.Contains(expected, StringComparison.Ordinal));
        Assert.Equal(1, rejected.Total);
    }

    [Fact]
    public void The_same_bad_content_alarms_once_however_often_it_is_read()
    {
        folder.Write(PolicyJson.Valid());
        using var source = new JsonFilePolicySource(folder.FilePath);
        using var monitor = Monitor(source);
        int alarms = 0;
        monitor.Rejected += (_, _) => alarms++;
        monitor.Refresh();

        File.WriteAllText(folder.FilePath, "{");
        for (int i = 0; i < 5; i++)
        {
            monitor.Refresh();
        }

        Assert.Equal(1, alarms);
    }

    [Fact]
    public void A_valid_edit_after_an_invalid_one_applies_and_clears_the_alarm()
    {
        folder.Write(PolicyJson.Valid("audit"));
        using var source = new JsonFilePolicySource(folder.FilePath);
        using var monitor = Monitor(source);
        var applied = new List<PolicyAppliedEventArgs>();
        monitor.Applied += (_, e) => applied.Add(e);
        monitor.Refresh();

        folder.Write(PolicyJson.Valid("sometimes"));
        monitor.Refresh();
        Assert.NotNull(monitor.ActiveAlarm);

        folder.Write(PolicyJson.Valid("enforce"));
        monitor.Refresh();

        Assert.Null(monitor.ActiveAlarm);
        Assert.Equal(DriverMode.Enforce, monitor.Policy.DriverMode);
        Assert.Equal(2, monitor.Current.Generation);
        Assert.Equal([1L, 2L], applied.Select(a => a.Applied.Generation));
        Assert.Equal(DriverMode.Audit, applied[1].Previous.Policy.DriverMode);
    }

    [Fact]
    public void Going_back_to_the_policy_in_force_clears_the_alarm_without_a_swap()
    {
        folder.Write(PolicyJson.Valid("audit"));
        using var source = new JsonFilePolicySource(folder.FilePath);
        using var monitor = Monitor(source);
        monitor.Refresh();
        var good = monitor.Current;

        File.WriteAllText(folder.FilePath, "{");
        monitor.Refresh();
        folder.Write(PolicyJson.Valid("audit"));
        monitor.Refresh();

        Assert.Same(good, monitor.Current);
        Assert.Null(monitor.ActiveAlarm);
    }

    [Fact]
    public void An_invalid_policy_at_start_leaves_the_initial_policy_in_force()
    {
        File.WriteAllText(folder.FilePath, "{\"SOFTWARE\\\\Policies\\\\SieveQ\": {\"DriverMode\": \"off\"}}");
        var cached = AgentPolicy.NotConfigured with { DriverMode = DriverMode.Audit };
        using var source = new JsonFilePolicySource(folder.FilePath);
        using var monitor = new PolicyMonitor(source, logger, initial: cached);

        monitor.Refresh();

        Assert.Same(cached, monitor.Policy);
        Assert.Equal(0, monitor.Current.Generation);
        Assert.NotNull(monitor.ActiveAlarm);
    }

    [Fact]
    public async Task The_file_watcher_picks_up_a_change()
    {
        folder.Write(PolicyJson.Valid("audit"));
        // The periodic re-check is pushed out of the test's reach, so only the watcher can deliver the change.
        using var source = new JsonFilePolicySource(folder.FilePath, recheckInterval: TimeSpan.FromHours(1));
        using var monitor = Monitor(source);
        monitor.Start();
        Assert.Equal(DriverMode.Audit, monitor.Policy.DriverMode);

        folder.Write(PolicyJson.Valid("enforce"));
        await Eventually.HoldsAsync(() => monitor.Policy.DriverMode == DriverMode.Enforce, "the renamed-in file is applied");

        File.WriteAllText(folder.FilePath, PolicyJson.Valid("audit").ToJsonString());
        await Eventually.HoldsAsync(() => monitor.Policy.DriverMode == DriverMode.Audit, "the file written in place is applied");

        File.WriteAllText(folder.FilePath, "{ broken");
        await Eventually.HoldsAsync(() => monitor.ActiveAlarm is not null, "the broken edit raises the alarm");
        Assert.Equal(DriverMode.Audit, monitor.Policy.DriverMode);
    }

    [Fact]
    public async Task The_periodic_recheck_finds_a_file_whose_folder_appeared_later()
    {
        string path = Path.Combine(folder.Directory, "later", "policy.json");
        using var source = new JsonFilePolicySource(path, recheckInterval: TimeSpan.FromMilliseconds(100));
        using var monitor = Monitor(source);
        monitor.Start();
        Assert.Equal(AgentPolicy.NotConfigured, monitor.Policy);

        Directory.CreateDirectory(Path.GetDirectoryName(path)!);
        File.WriteAllText(path, PolicyJson.Valid("audit").ToJsonString());

        await Eventually.HoldsAsync(() => monitor.Policy.DriverMode == DriverMode.Audit, "the new file is applied");
    }

    [Fact]
    public async Task Readers_only_ever_see_whole_policies()
    {
        // Two valid policies that differ in several settings at once, and broken ones in between: a reader
        // seeing audit with the enforce policy's whitelist would have caught a half-applied policy.
        JsonObject audit = PolicyJson.Valid("audit");
        JsonObject enforce = PolicyJson.Valid("enforce");
        PolicyJson.Key(enforce)["ApplicationWhitelist"]![@"C:\second.exe"] = PolicyJson.AppHash;
        PolicyJson.Key(enforce)["DefaultMessageBurst"] = 9000;
        folder.Write(audit);
        using var source = new JsonFilePolicySource(folder.FilePath);
        using var monitor = Monitor(source);
        monitor.Refresh();

        using var stop = new CancellationTokenSource();
        var readers = Enumerable.Range(0, 2).Select(_ => Task.Run(() =>
        {
            int torn = 0;
            while (!stop.IsCancellationRequested)
            {
                var p = monitor.Policy;
                bool isAudit = p.DriverMode == DriverMode.Audit;
                if (isAudit != (p.ApplicationWhitelist.Length == 1) || isAudit != (p.DefaultRateLimits.MessageBurst == 8000))
                {
                    torn++;
                }
            }
            return torn;
        })).ToArray();

        for (int i = 0; i < 40; i++)
        {
            folder.Write(i % 2 == 0 ? enforce : audit);
            monitor.Refresh();
            File.WriteAllText(folder.FilePath, "{\"SOFTWARE\\\\Policies\\\\SieveQ\": {\"DriverMode\": \"audit\", \"DefaultMessageBurst\": 0" + i.ToString(CultureInfo.InvariantCulture));
            monitor.Refresh();
        }
        await stop.CancelAsync();

        Assert.All(await Task.WhenAll(readers), torn => Assert.Equal(0, torn));
        Assert.Equal(41, monitor.Current.Generation);
    }

    private static string BadContent(string edit)
    {
        var doc = PolicyJson.Valid("audit");
        var key = PolicyJson.Key(doc);
        switch (edit)
        {
            case "bad enum":
                key["DriverMode"] = "enforcee";
                return doc.ToJsonString();
            case "malformed JSON":
                return doc.ToJsonString().Replace(",", ",,", StringComparison.Ordinal);
            case "too long list":
                var endpoints = new JsonObject();
                for (int i = 1; i <= 65; i++)
                {
                    endpoints[i.ToString(CultureInfo.InvariantCulture)] = $"http://presq-{i}.example.org:7401";
                }
                key["PreSqEndpoints"] = endpoints;
                return doc.ToJsonString();
            case "truncated file":
                string whole = PolicyJson.Valid("enforce").ToJsonString();
                return whole[..(whole.Length / 2)];
            case "empty file":
                return "";
            case "oversized file":
                key["Padding"] = new string('x', PolicyLimits.MaxStringValueLength);
                return doc.ToJsonString() + new string(' ', PolicyLimits.MaxFileBytes);
            case "one bad value among good ones":
                key["DriverMode"] = "enforce";
                key["ApplicationWhitelist"]![@"C:\new.exe"] = "zz";
                return doc.ToJsonString();
            default:
                throw new ArgumentOutOfRangeException(nameof(edit));
        }
    }
}
