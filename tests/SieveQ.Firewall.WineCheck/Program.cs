using SieveQ.Policy.Hosting;
using System.ComponentModel;
using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using System.Text;
using Microsoft.Win32.SafeHandles;
using Microsoft.Extensions.Logging;
using SieveQ.Firewall.Bridge;
using SieveQ.Firewall.Enforcement;
using SieveQ.Firewall.QGuard;
using SieveQ.Policy;

namespace SieveQ.Firewall.WineCheck;

/// <summary>
/// The agent's WindowsDriverBridge against the real sieveqfw.sys under Wine (driver/wine/run.sh loads it with the
/// fwpkclnt.sys stand-in, whose test-only codes let this program call the driver's classify functions). Each check
/// catches its own exceptions; prints `N passed, M failed`.
///   SieveQ.Firewall.WineCheck.exe BLOB_DIR
/// </summary>
public static class Program
{
    public static async Task<int> Main(string[] args)
    {
        if (!OperatingSystem.IsWindows() || args.Length < 1)
        {
            await Console.Error.WriteLineAsync("usage (under Wine or Windows, with sieveqfw.sys loaded): SieveQ.Firewall.WineCheck BLOB_DIR").ConfigureAwait(false);
            return 2;
        }
        var run = new Checks(args[0]);
        await run.RunAsync().ConfigureAwait(false);
        // After the driver's checks, which it does not need: run first, this program died silently (exit code 2) in the
        // enforcer's check under Wine 8.0, twice; Wine crashes on the second exception that passes through the
        // runtime's native code (shared notes/wine.md), and the Kestrel listener's start and stop may leave one.
        await run.AgentPipeAsync().ConfigureAwait(false);
        Console.WriteLine($"{run.Passed} passed, {run.Failed} failed");
        return run.Failed == 0 ? 0 : 1;
    }
}

[SupportedOSPlatform("windows")]
internal sealed partial class Checks(string blobDir)
{
    private const string Device = @"\\.\SieveQFw";
    private const string AgentPath = @"\device\harddiskvolume2\program files\sieveq\agent.exe";
    private static readonly byte[] AgentSha = Convert.FromHexString("d4f0bc5a29de06b510f9aa428f1eedba926012b591fef7a518e776a7c9bd1824");
    private static readonly uint StandinCounts = (0x8A5Fu << 16) | (0xF00u << 2);
    private static readonly uint StandinClassify = (0x8A5Fu << 16) | (0xF01u << 2);
    private static readonly uint StandinBfe = (0x8A5Fu << 16) | (0xF03u << 2);
    private static readonly uint StandinBoot = (0x8A5Fu << 16) | (0xF04u << 2);
    private const int CountsPended = 88, CountsCompleted = 96;
    private static readonly TimeSpan Quick = TimeSpan.FromMilliseconds(500);

    public int Passed { get; private set; }
    public int Failed { get; private set; }

    // The stand-in has no process creation times: its process key is the pid.
    private static ulong StandinKey(uint pid, long created) => pid;

    private void Check(string what, bool ok, string? detail = null)
    {
        if (ok)
        {
            Passed++;
        }
        else
        {
            Failed++;
            Console.WriteLine($"FAIL {what}{(detail is null ? "" : $" ({detail})")}");
        }
    }

    private async Task CheckAsync(string what, Func<Task<bool>> body)
    {
        try
        {
            Check(what, await body().ConfigureAwait(false));
        }
        catch (Exception e)
        {
            Check(what, false, $"{e.GetType().Name}: {e.Message}");
        }
    }

    public async Task RunAsync()
    {
        await RegistryPolicyAsync().ConfigureAwait(false); // no driver needed: before the driver's checks
        // Another interface version is refused with a message that says what to do; the handle goes with it.
        await CheckAsync("a bridge of interface version 4 is refused, naming both versions", () =>
        {
            try
            {
                var wrong = new WindowsDriverBridge(Device, StandinKey, 4);
                _ = wrong.DisposeAsync();
                return Task.FromResult(false);
            }
            catch (DriverInterfaceMismatchException e)
            {
                Console.WriteLine($"  refused: {e.Message}");
                return Task.FromResult(e.Message.Contains("device interface 3", StringComparison.Ordinal) &&
                                       e.Message.Contains("device interface 4", StringComparison.Ordinal));
            }
        }).ConfigureAwait(false);

        // The old bridge: a synchronous open, the wait run on a pool thread, the stop path a cancelled token.
        await CheckAsync("control: the old synchronous bridge's stop path leaves the wait in the driver past a second", LegacyStopHangsAsync).ConfigureAwait(false);

        WindowsDriverBridge bridge;
        try
        {
            bridge = new WindowsDriverBridge(Device, StandinKey);
        }
        catch (Exception e)
        {
            Check("bridge opened", false, $"{e.GetType().Name}: {e.Message}");
            return;
        }
        Check("bridge opened after the handshake, driver interface 3", bridge.Version.InterfaceVersion == 3 && bridge.Version.Major == 1);
        await CheckAsync("a second bridge is refused while the first is open", () =>
        {
            try
            {
                var second = new WindowsDriverBridge(Device, StandinKey);
                _ = second.DisposeAsync();
                return Task.FromResult(false);
            }
            catch (Win32Exception e)
            {
                Console.WriteLine($"  second bridge: {e.Message} ({e.NativeErrorCode})");
                return Task.FromResult(e.NativeErrorCode == 5);
            }
        }).ConfigureAwait(false);

        await CheckAsync("golden workstation policy pushed, serial 42 installed", async () =>
        {
            var result = await bridge.PushPolicyAsync(await File.ReadAllBytesAsync(Path.Combine(blobDir, "workstation.bin")).ConfigureAwait(false), CancellationToken.None).ConfigureAwait(false);
            var stats = await bridge.GetStatisticsAsync(CancellationToken.None).ConfigureAwait(false);
            return result.Accepted && stats.PolicySerial == 42 && stats.LevelCount == 3;
        }).ConfigureAwait(false);
        await CheckAsync("a blob over the driver's cap is refused before it is sent", async () =>
        {
            var result = await bridge.PushPolicyAsync(new byte[WindowsDriverBridge.MaxPolicyBytes + 1], CancellationToken.None).ConfigureAwait(false);
            return !result.Accepted && result.Status == 2;
        }).ConfigureAwait(false);
        await CheckAsync("a policy whose arena is over the driver's cap is refused as a limit, the running one kept", async () =>
        {
            var result = await bridge.PushPolicyAsync(await File.ReadAllBytesAsync(Path.Combine(blobDir, "big-175k.bin")).ConfigureAwait(false), CancellationToken.None).ConfigureAwait(false);
            var stats = await bridge.GetStatisticsAsync(CancellationToken.None).ConfigureAwait(false);
            return !result.Accepted && result.Status == 45 && stats.PolicySerial == 42;
        }).ConfigureAwait(false);

        using (var drain = new CancellationTokenSource(TimeSpan.FromMilliseconds(300)))
        {
            // the policy event from the push
            await DrainAsync(bridge, drain.Token).ConfigureAwait(false);
        }

        await CheckAsync("a request the driver fails at once surfaces as its error, and the handle goes on serving", async () =>
        {
            try
            {
                await bridge.SetLevelAsync(99, CancellationToken.None).ConfigureAwait(false);
                return false;
            }
            catch (Win32Exception e) when (e.NativeErrorCode == 87)
            {
                var stats = await bridge.GetStatisticsAsync(CancellationToken.None).ConfigureAwait(false);
                return stats.PolicySerial == 42 && stats.Level == 0;
            }
        }).ConfigureAwait(false);
        await ConcurrencyAsync(bridge).ConfigureAwait(false);
        await AttestPendedAsync(bridge).ConfigureAwait(false);
        await TruncatedAsync(bridge).ConfigureAwait(false);
        await CancelAsync(bridge).ConfigureAwait(false);
        await DisposeAsync(bridge).ConfigureAwait(false);
        await EnforcerAsync().ConfigureAwait(false);
        // Last: it stops and restarts the stand-in's BFE, which the checks above do not expect.
        await BootFiltersAsync().ConfigureAwait(false);
    }

    /// <summary>The enforcer's warnings, on the check's output.</summary>
    private sealed class ConsoleLogs : ILoggerFactory, ILogger
    {
        public ILogger CreateLogger(string categoryName) => this;
        public void AddProvider(ILoggerProvider provider)
        {
        }
        public void Dispose()
        {
        }
        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;
        public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Warning;
        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (IsEnabled(logLevel))
            {
                string text = formatter(state, exception);
                Console.WriteLine($"  enforcer {logLevel}: {(text.Length > 300 ? text[..300] + "..." : text)}");
            }
        }
    }

    private sealed class IdleSampler : ILoadSampler
    {
        public ValueTask<LoadSample> SampleAsync(CancellationToken cancellationToken) => ValueTask.FromResult(new LoadSample(0, 0, 0));
    }

    /// <summary>
    /// The agent's own enforcer on the bridge: its policy (this program whitelisted by path and SHA-256) compiled
    /// in C# and pushed; a connect of this program pended by the driver; the NEW_IDENTITY event (a 258-byte path,
    /// truncated by the driver, recovered by the bridge) hashed and attested by the enforcer within the pend window;
    /// then the agent's stop with a wait for events pending in the driver.
    /// </summary>
    private async Task EnforcerAsync()
    {
        uint self = (uint)Environment.ProcessId;
        string? native = TryOwnImage(self, StandinKey(self, 0));
        string exe = Environment.ProcessPath ?? "";
        FirewallEnforcer? enforcer = null;
        try
        {
            string sha = Convert.ToHexString(SHA256.HashData(await File.ReadAllBytesAsync(exe).ConfigureAwait(false)));
            using var monitor = new PolicyMonitor(new JsonFilePolicySource(Path.Combine(Path.GetTempPath(), "sqfw-wine-absent.json")),
                initial: new AgentPolicy { ApplicationWhitelist = [new WhitelistEntry(exe, sha)] });
            var bridge = new WindowsDriverBridge(Device, StandinKey);
            enforcer = new FirewallEnforcer(bridge, null, monitor, new IdleSampler(),
                new FirewallOptions { AgentImagePath = null, QGuard = new QGuardSettings { Interval = TimeSpan.FromHours(1) } }, new ConsoleLogs());
            await enforcer.StartAsync(CancellationToken.None).ConfigureAwait(false);
            var stats = await bridge.GetStatisticsAsync(CancellationToken.None).ConfigureAwait(false);
            Check("the enforcer's policy (compiled by the C# PolicyCompiler) is running in the driver", stats.PolicySerial != 42 && stats.PolicyRules >= 1,
                $"serial {stats.PolicySerial}, rules {stats.PolicyRules}");
            var boot = enforcer.BootFilters;
            Check("the enforcer's start sent the policy's boot-time filter setting (off) and the driver confirmed none stored",
                boot is { Succeeded: true, Enabled: false, StoredFilters: 0 }, boot?.Message ?? "nothing sent");

            ulong before = await CountAsync(bridge, CountsCompleted).ConfigureAwait(false);
            var sw = Stopwatch.StartNew();
            var (action, flags) = await ClassifyAsync(bridge, (native ?? exe).ToLowerInvariant(), self, 0x0A140101, 443, 50200, reauth: false).ConfigureAwait(false);
            Check("this program's connect is pended until its image is attested", (flags & 1) != 0 && action == 0x1001);
            while (await CountAsync(bridge, CountsCompleted).ConfigureAwait(false) < before + 1 && sw.Elapsed < TimeSpan.FromSeconds(3))
            {
                await Task.Delay(10).ConfigureAwait(false);
            }
            double ms = sw.Elapsed.TotalMilliseconds;
            var counters = await enforcer.GetCountersAsync(CancellationToken.None).ConfigureAwait(false);
            Console.WriteLine($"  enforcer: pend to completion {ms:F0} ms, attested {counters.GetValueOrDefault("firewall.attested")}, failed {counters.GetValueOrDefault("firewall.attest_failed")}");
            Check("the enforcer hashed the image behind the truncated path and attested it within the 2 s pend window",
                  await CountAsync(bridge, CountsCompleted).ConfigureAwait(false) == before + 1 && ms < 2000);
            var (again, _) = await ClassifyAsync(bridge, (native ?? exe).ToLowerInvariant(), self, 0x0A140101, 443, 50200, reauth: true).ConfigureAwait(false);
            Check("re-authorisation permits the attested image", again == 0x1002);
            await Task.Delay(100).ConfigureAwait(false);
        }
        catch (Exception e)
        {
            Check("enforcer on the bridge", false, $"{e.GetType().Name}: {e.Message}");
        }
        if (enforcer is not null)
        {
            await CheckAsync("the agent's stop (enforcer StopAsync, then DisposeAsync) finishes within a second with a wait pending", async () =>
            {
                var sw = Stopwatch.StartNew();
                await enforcer.DisposeAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(1)).ConfigureAwait(false);
                Console.WriteLine($"  enforcer stop and dispose: {sw.Elapsed.TotalMilliseconds:F1} ms");
                return true;
            }).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// The bridge's SetBootFiltersAsync against the driver, with the stand-in's BFE store (wine/standin_boot.c) read
    /// back after each step, as wine/harness_boot.c checks the same IOCTL from C.
    /// </summary>
    private async Task BootFiltersAsync()
    {
        WindowsDriverBridge bridge;
        try
        {
            bridge = new WindowsDriverBridge(Device, StandinKey);
        }
        catch (Exception e)
        {
            Check("boot filters: bridge opened", false, $"{e.GetType().Name}: {e.Message}");
            return;
        }
        BootStore? on = null;
        await CheckAsync("boot filters on: the driver reports 16 stored, and BFE's store holds 16 boot-time filters", async () =>
        {
            var result = await bridge.SetBootFiltersAsync(true, CancellationToken.None).ConfigureAwait(false);
            on = await BootStoreAsync(bridge).ConfigureAwait(false);
            Console.WriteLine($"  boot filters on: {result.Message}; store: {on}");
            return result is { Succeeded: true, Enabled: true, StoredFilters: 16 } && on.Filters == 16 && on.AllBootTime && on.DistinctKeys && on.HasProvider;
        }).ConfigureAwait(false);
        await CheckAsync("boot filters on again: 16 reported, the same 16 keys stored, none twice", async () =>
        {
            var result = await bridge.SetBootFiltersAsync(true, CancellationToken.None).ConfigureAwait(false);
            var again = await BootStoreAsync(bridge).ConfigureAwait(false);
            return result is { Succeeded: true, StoredFilters: 16 } && again.Filters == 16 && again.DistinctKeys && on is not null && again.Keys.SetEquals(on.Keys);
        }).ConfigureAwait(false);
        await CheckAsync("a malformed request (wrong magic, 15 bytes, enable 2) is refused with ERROR_INVALID_PARAMETER and changes nothing", async () =>
        {
            byte[] wrongMagic = BootFilterMessages.Request(false);
            wrongMagic[0] ^= 1;
            byte[] enableTwo = BootFilterMessages.Request(false);
            enableTwo[4] = 2;
            int refused = 0;
            foreach (byte[] request in new[] { wrongMagic, BootFilterMessages.Request(false)[..15], enableTwo })
            {
                try
                {
                    await bridge.ControlAsync(BootFilterMessages.IoctlCode, request, new byte[BootFilterMessages.ReplyBytes], CancellationToken.None).ConfigureAwait(false);
                }
                catch (Win32Exception e) when (e.NativeErrorCode == 87)
                {
                    refused++;
                }
            }
            var after = await BootStoreAsync(bridge).ConfigureAwait(false);
            return refused == 3 && after.Filters == 16 && on is not null && after.Keys.SetEquals(on.Keys);
        }).ConfigureAwait(false);
        await CheckAsync("BFE stopped: the bridge reports BfeNotRunning, nothing claimed, the store untouched", async () =>
        {
            await SetBfeAsync(bridge, 2).ConfigureAwait(false); // FWPM_SERVICE_STOP_PENDING
            await SetBfeAsync(bridge, 0).ConfigureAwait(false); // FWPM_SERVICE_STOPPED
            BootFiltersResult result;
            try
            {
                result = await bridge.SetBootFiltersAsync(false, CancellationToken.None).ConfigureAwait(false);
            }
            finally
            {
                await SetBfeAsync(bridge, 3).ConfigureAwait(false); // FWPM_SERVICE_RUNNING
            }
            var after = await BootStoreAsync(bridge).ConfigureAwait(false);
            Console.WriteLine($"  boot filters with BFE stopped: {result.Failure}: {result.Message}");
            return result is { Failure: BootFilterFailure.BfeNotRunning, StoredFilters: null, Status: 0xC00000A3 } && after.Filters == 16;
        }).ConfigureAwait(false);
        await CheckAsync("boot filters off: 0 reported, no filter or provider left in BFE's store", async () =>
        {
            var result = await bridge.SetBootFiltersAsync(false, CancellationToken.None).ConfigureAwait(false);
            var off = await BootStoreAsync(bridge).ConfigureAwait(false);
            return result is { Succeeded: true, Enabled: false, StoredFilters: 0 } && off.Filters == 0 && !off.HasProvider;
        }).ConfigureAwait(false);
        await bridge.DisposeAsync().ConfigureAwait(false);
    }

    /// <summary>What the stand-in's BFE store holds (sq_boot_state in wine/standin_boot_ioctl.h, x64 layout).</summary>
    private sealed record BootStore(int Filters, bool HasProvider, bool AllBootTime, HashSet<string> Keys, bool DistinctKeys)
    {
        public override string ToString() => $"{Filters} filters, provider {(HasProvider ? "present" : "absent")}, {Keys.Count} distinct keys";
    }

    private static async Task<BootStore> BootStoreAsync(WindowsDriverBridge bridge)
    {
        const int StoreAt = 88, FiltersAt = StoreAt + 80, FilterSize = 328, StateSize = FiltersAt + 40 * FilterSize;
        var state = new byte[StateSize];
        uint got = await bridge.ControlAsync(StandinBoot, new byte[8] /* SQ_BOOT_GET */, state, CancellationToken.None).ConfigureAwait(false);
        if (got != StateSize)
        {
            throw new InvalidOperationException($"the stand-in's store answer is {got} bytes, not {StateSize}");
        }
        int n = (int)BitConverter.ToUInt32(state, StoreAt + 76);
        var keys = new HashSet<string>(StringComparer.Ordinal);
        bool bootTime = true;
        for (int i = 0; i < Math.Min(n, 40); i++)
        {
            int f = FiltersAt + i * FilterSize;
            keys.Add(Convert.ToHexString(state, f, 16));
            bootTime &= BitConverter.ToUInt32(state, f + 68) == 2; // FWPM_FILTER_FLAG_BOOTTIME alone
        }
        return new BootStore(n, BitConverter.ToUInt32(state, StoreAt + 4) != 0, bootTime, keys, keys.Count == n);
    }

    private static Task SetBfeAsync(WindowsDriverBridge bridge, uint state) =>
        bridge.ControlAsync(StandinBfe, BitConverter.GetBytes(state), null, CancellationToken.None);

    private static async Task<int> DrainAsync(WindowsDriverBridge bridge, CancellationToken token)
    {
        int n = 0;
        try
        {
            await foreach (var _ in bridge.ReadEventsAsync(token).ConfigureAwait(false))
            {
                n++;
            }
        }
        catch (OperationCanceledException) when (token.IsCancellationRequested)
        {
        }
        return n;
    }

    /// <summary>A wait for events pends; stats, attest and a level change complete meanwhile, and the wait ends with the level's event.</summary>
    private async Task ConcurrencyAsync(WindowsDriverBridge bridge)
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        await using var events = bridge.ReadEventsAsync(cts.Token).GetAsyncEnumerator(cts.Token);
        var next = events.MoveNextAsync().AsTask();
        await Task.Delay(200).ConfigureAwait(false);
        Check("wait for events pends with no event", !next.IsCompleted);
        await CheckAsync("stats complete at once while the wait pends", async () =>
        {
            var sw = Stopwatch.StartNew();
            var stats = await bridge.GetStatisticsAsync(CancellationToken.None).WaitAsync(Quick).ConfigureAwait(false);
            Console.WriteLine($"  stats beside a pending wait: {sw.Elapsed.TotalMilliseconds:F1} ms");
            return stats.PolicySerial == 42 && !next.IsCompleted;
        }).ConfigureAwait(false);
        await CheckAsync("an attestation completes at once while the wait pends", async () =>
        {
            await bridge.AttestAsync(0xABCDEF, AgentSha, CancellationToken.None).WaitAsync(Quick).ConfigureAwait(false);
            return !next.IsCompleted;
        }).ConfigureAwait(false);
        await CheckAsync("a level change completes and ends the wait with its event", async () =>
        {
            await bridge.SetLevelAsync(1, CancellationToken.None).WaitAsync(Quick).ConfigureAwait(false);
            bool got = await next.WaitAsync(TimeSpan.FromSeconds(2)).ConfigureAwait(false);
            return got && events.Current.Type == FirewallEventType.Level && events.Current.Value == 1;
        }).ConfigureAwait(false);
        await bridge.SetLevelAsync(0, CancellationToken.None).ConfigureAwait(false);
        await cts.CancelAsync().ConfigureAwait(false);
    }

    /// <summary>A connect the driver pends (the agent's image needs its hash) is attested through the bridge within the pend window.</summary>
    private async Task AttestPendedAsync(WindowsDriverBridge bridge)
    {
        const uint pid = 4100;
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        await using var events = bridge.ReadEventsAsync(cts.Token).GetAsyncEnumerator(cts.Token);
        try
        {
            var next = events.MoveNextAsync().AsTask();
            ulong completedBefore = await CountAsync(bridge, CountsCompleted).ConfigureAwait(false);
            ulong pendedBefore = await CountAsync(bridge, CountsPended).ConfigureAwait(false);
            var sw = Stopwatch.StartNew();
            var (action, flags) = await ClassifyAsync(bridge, AgentPath, pid, 0x0A140101, 443, 50001, reauth: false).ConfigureAwait(false);
            Check("the agent's connect is pended (absorbed)", (flags & 1) != 0 && action == 0x1001 &&
                  await CountAsync(bridge, CountsPended).ConfigureAwait(false) == pendedBefore + 1);
            bool got = await next.WaitAsync(TimeSpan.FromSeconds(2)).ConfigureAwait(false);
            while (got && events.Current.Type != FirewallEventType.NewIdentity)
            {
                got = await events.MoveNextAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(2)).ConfigureAwait(false);
            }
            var ev = events.Current;
            Check("the pending wait returns its NEW_IDENTITY event", got && ev.Type == FirewallEventType.NewIdentity && ev.ProcessKey == pid &&
                  ev.ImagePath == AgentPath && !ev.PathTruncated);
            await bridge.AttestAsync(ev.ProcessKey, AgentSha, CancellationToken.None).ConfigureAwait(false);
            var waited = Stopwatch.StartNew();
            while (await CountAsync(bridge, CountsCompleted).ConfigureAwait(false) < completedBefore + 1 && waited.Elapsed < TimeSpan.FromSeconds(3))
            {
                await Task.Delay(10).ConfigureAwait(false);
            }
            double ms = sw.Elapsed.TotalMilliseconds;
            Console.WriteLine($"  pend to completion through the bridge: {ms:F0} ms (window 2000 ms)");
            Check("attested and completed within the 2 s pend window", await CountAsync(bridge, CountsCompleted).ConfigureAwait(false) == completedBefore + 1 && ms < 2000);
            var (again, _) = await ClassifyAsync(bridge, AgentPath, pid, 0x0A140101, 443, 50001, reauth: true).ConfigureAwait(false);
            var stats = await bridge.GetStatisticsAsync(CancellationToken.None).ConfigureAwait(false);
            Check("re-authorisation permits, nothing timed out", again == 0x1002 && stats.PendTimeouts == 0);
        }
        catch (Exception e)
        {
            Check("pended connect attested", false, $"{e.GetType().Name}: {e.Message}");
        }
        await cts.CancelAsync().ConfigureAwait(false);
    }

    /// <summary>An image path over the event's 256 bytes: the bridge asks the process; when that fails the event says truncated.</summary>
    private async Task TruncatedAsync(WindowsDriverBridge bridge)
    {
        uint self = (uint)Environment.ProcessId;
        // the stand-in carries at most 260 UTF-16 units: 259 bytes here, over the event's 256
        string longPath = @"\device\harddiskvolume2\" + new string('d', 225) + @"\tool.exe";
        string? own = TryOwnImage(self, StandinKey(self, 0));
        Console.WriteLine($"  this process's NT image path: {(own is null ? "not found" : $"{Encoding.UTF8.GetByteCount(own)} bytes, {own[..Math.Min(own.Length, 40)]}...")}");
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        await using var events = bridge.ReadEventsAsync(cts.Token).GetAsyncEnumerator(cts.Token);
        try
        {
            var next = events.MoveNextAsync().AsTask();
            await ClassifyAsync(bridge, longPath, self, 0x0A140101, 443, 50100, reauth: false).ConfigureAwait(false);
            bool got = await next.WaitAsync(TimeSpan.FromSeconds(2)).ConfigureAwait(false);
            while (got && events.Current.Type != FirewallEventType.Blocked)
            {
                got = await events.MoveNextAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(2)).ConfigureAwait(false);
            }
            var ev = events.Current;
            // This process is alive and keyed as the driver keys it, but its image is not that path: the prefix must
            // not be passed on as if it were the whole path.
            Check("a 259-byte path that is not the process's image stays marked truncated",
                  got && ev.Type == FirewallEventType.Blocked && ev.PathTruncated && Encoding.UTF8.GetByteCount(ev.ImagePath) == 256 &&
                  longPath.StartsWith(ev.ImagePath, StringComparison.Ordinal), got ? $"{ev.Type} truncated={ev.PathTruncated} {ev.ImagePath.Length}" : "no event");
        }
        catch (Exception e)
        {
            Check("truncated path event", false, $"{e.GetType().Name}: {e.Message}");
        }
        await cts.CancelAsync().ConfigureAwait(false);
        await OwnLongPathAsync(bridge, self, own).ConfigureAwait(false);
        Check("the prefix test: a longer path extending it matches, a different or equal-length one does not",
              ProcessImages.Extends(@"\Device\HarddiskVolume2\" + new string('D', 300), Encoding.UTF8.GetBytes(@"\device\harddiskvolume2\" + new string('d', 232))) &&
              !ProcessImages.Extends(@"\Device\HarddiskVolume3\" + new string('D', 300), Encoding.UTF8.GetBytes(@"\device\harddiskvolume2\" + new string('d', 232))) &&
              !ProcessImages.Extends(@"\device\harddiskvolume2\ab", Encoding.UTF8.GetBytes(@"\device\harddiskvolume2\ab")));
        Check("a process's image is found by its key, and not by another key",
              TryOwnImage(self, StandinKey(self, 0)) is not null && TryOwnImage(self, self + 1) is null);
    }

    /// <summary>
    /// run.sh installs this program so deep that its NT image path is over the event's 256 bytes (and within the
    /// stand-in's 260 units): the driver sends a truncated path and the bridge must hand on the whole one.
    /// </summary>
    private async Task OwnLongPathAsync(WindowsDriverBridge bridge, uint self, string? own)
    {
        int bytes = own is null ? 0 : Encoding.UTF8.GetByteCount(own);
        if (own is null || bytes <= WindowsDriverBridge.EventPathBytes || own.Length > 260)
        {
            Check("installed deep enough for a truncated own path", false, $"{bytes} bytes");
            return;
        }
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        await using var events = bridge.ReadEventsAsync(cts.Token).GetAsyncEnumerator(cts.Token);
        try
        {
            var next = events.MoveNextAsync().AsTask();
            await ClassifyAsync(bridge, own.ToLowerInvariant(), self, 0x0A140101, 443, 50101, reauth: false).ConfigureAwait(false);
            bool got = await next.WaitAsync(TimeSpan.FromSeconds(2)).ConfigureAwait(false);
            while (got && events.Current.Type != FirewallEventType.Blocked)
            {
                got = await events.MoveNextAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(2)).ConfigureAwait(false);
            }
            var ev = events.Current;
            Check($"this process's {bytes}-byte image path, truncated by the driver, is recovered whole by the bridge",
                  got && !ev.PathTruncated && ev.ImagePath == own, got ? $"truncated={ev.PathTruncated} {ev.ImagePath}" : "no event");
        }
        catch (Exception e)
        {
            Check("own long path event", false, $"{e.GetType().Name}: {e.Message}");
        }
        await cts.CancelAsync().ConfigureAwait(false);
    }

    // The process's own NT image path, extended by nothing: asks with an empty prefix so only the key decides.
    private static string? TryOwnImage(uint pid, ulong key) => ProcessImages.TryGetFullImagePath(pid, key, ReadOnlySpan<byte>.Empty, StandinKey);

    /// <summary>The agent's stop: its token cancels the pending wait in the driver.</summary>
    private async Task CancelAsync(WindowsDriverBridge bridge)
    {
        await CheckAsync("cancelling the event loop's token ends the pending wait within a second", async () =>
        {
            using var cts = new CancellationTokenSource();
            var loop = DrainAsync(bridge, cts.Token);
            await Task.Delay(200).ConfigureAwait(false);
            if (loop.IsCompleted)
            {
                return false;
            }
            var sw = Stopwatch.StartNew();
            await cts.CancelAsync().ConfigureAwait(false);
            await loop.WaitAsync(TimeSpan.FromSeconds(1)).ConfigureAwait(false);
            Console.WriteLine($"  cancel to end of the event loop: {sw.Elapsed.TotalMilliseconds:F1} ms");
            // and the handle still serves requests
            var stats = await bridge.GetStatisticsAsync(CancellationToken.None).WaitAsync(Quick).ConfigureAwait(false);
            return stats.PolicySerial == 42;
        }).ConfigureAwait(false);
    }

    /// <summary>Disposing the bridge with a wait still in the driver ends that wait and frees the device for the next agent.</summary>
    private async Task DisposeAsync(WindowsDriverBridge bridge)
    {
        await CheckAsync("disposing the bridge ends a pending wait within a second", async () =>
        {
            var loop = DrainAsync(bridge, CancellationToken.None);
            await Task.Delay(200).ConfigureAwait(false);
            var sw = Stopwatch.StartNew();
            await bridge.DisposeAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(1)).ConfigureAwait(false);
            try
            {
                await loop.WaitAsync(TimeSpan.FromSeconds(1)).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                // the wait's end, as the event loop sees it
            }
            Console.WriteLine($"  dispose to end of the event loop: {sw.Elapsed.TotalMilliseconds:F1} ms");
            return sw.Elapsed < TimeSpan.FromSeconds(1);
        }).ConfigureAwait(false);
        await CheckAsync("the device can be opened again after the bridge is disposed", async () =>
        {
            var again = new WindowsDriverBridge(Device, StandinKey);
            var stats = await again.GetStatisticsAsync(CancellationToken.None).ConfigureAwait(false);
            await again.DisposeAsync().ConfigureAwait(false);
            return stats.PolicySerial == 42;
        }).ConfigureAwait(false);
    }

    private static async Task<ulong> CountAsync(WindowsDriverBridge bridge, int offset)
    {
        var counts = new byte[4096];
        await bridge.ControlAsync(StandinCounts, null, counts, CancellationToken.None).ConfigureAwait(false);
        return BitConverter.ToUInt64(counts, offset);
    }

    /// <summary>The stand-in calls the driver's ALE connect classify (v4) with these values (sq_classify_in).</summary>
    private static async Task<(uint Action, uint Flags)> ClassifyAsync(WindowsDriverBridge bridge, string path, uint pid, uint remote,
        ushort remotePort, ushort localPort, bool reauth)
    {
        var input = new byte[592];
        BitConverter.TryWriteBytes(input.AsSpan(0), 0u);        // callout: ALE connect v4
        BitConverter.TryWriteBytes(input.AsSpan(4), 48u);       // FWPS_LAYER_ALE_AUTH_CONNECT_V4
        input[8] = 6;                                           // TCP
        input[9] = reauth ? (byte)1 : (byte)0;
        BitConverter.TryWriteBytes(input.AsSpan(12), 0x0A000005u);
        BitConverter.TryWriteBytes(input.AsSpan(16), remote);
        BitConverter.TryWriteBytes(input.AsSpan(20), localPort);
        BitConverter.TryWriteBytes(input.AsSpan(22), remotePort);
        BitConverter.TryWriteBytes(input.AsSpan(24), pid);
        BitConverter.TryWriteBytes(input.AsSpan(28), 7u);
        BitConverter.TryWriteBytes(input.AsSpan(32), 3u);
        BitConverter.TryWriteBytes(input.AsSpan(36), 20u);
        BitConverter.TryWriteBytes(input.AsSpan(40), 20u);
        byte[] utf16 = Encoding.Unicode.GetBytes(path);
        BitConverter.TryWriteBytes(input.AsSpan(68), (uint)utf16.Length);
        utf16.CopyTo(input.AsSpan(72));
        var output = new byte[16];
        await bridge.ControlAsync(StandinClassify, input, output, CancellationToken.None).ConfigureAwait(false);
        return (BitConverter.ToUInt32(output, 0), BitConverter.ToUInt32(output, 8));
    }

    /// <summary>
    /// The device opened as the bridge did before (no FILE_FLAG_OVERLAPPED), its wait for events issued the way the
    /// old ReadEventsAsync did (Task.Run of a blocking DeviceIoControl with the token): cancelling the token cannot
    /// reach the request in the driver. Windows also serialises a synchronous handle's requests, so stats would wait
    /// behind the pending wait there; Wine 8.0 does not (printed, not checked).
    /// </summary>
    private static async Task<bool> LegacyStopHangsAsync()
    {
        using SafeFileHandle h = CreateFileW(Device, 0xC0000000, 0, IntPtr.Zero, 3, 0, IntPtr.Zero);
        if (h.IsInvalid)
        {
            throw new Win32Exception(Marshal.GetLastPInvokeError(), "legacy open");
        }
        var hello = new byte[8];
        BitConverter.TryWriteBytes(hello, WindowsDriverBridge.HelloMagic);
        BitConverter.TryWriteBytes(hello.AsSpan(4), WindowsDriverBridge.InterfaceVersion);
        if (SyncControl(h, WindowsDriverBridge.IoctlHello, hello, new byte[20]) != 0)
        {
            throw new InvalidOperationException("legacy hello failed");
        }
        using var cts = new CancellationTokenSource();
        var wait = Task.Run(() => SyncControl(h, WindowsDriverBridge.IoctlWaitEvents, Array.Empty<byte>(), new byte[1024]), cts.Token);
        await Task.Delay(200).ConfigureAwait(false);
        var stats = Task.Run(() => SyncControl(h, WindowsDriverBridge.IoctlGetStats, Array.Empty<byte>(), new byte[512]));
        bool statsDone = await Task.WhenAny(stats, Task.Delay(TimeSpan.FromSeconds(1))).ConfigureAwait(false) == stats;
        bool pending = !wait.IsCompleted;
        await cts.CancelAsync().ConfigureAwait(false);
        bool stopped = await Task.WhenAny(wait, Task.Delay(TimeSpan.FromSeconds(1))).ConfigureAwait(false) == wait;
        Console.WriteLine($"  old synchronous bridge: wait {(pending ? "pending" : "ended")}, stats beside it {(statsDone ? "completed (Wine does not serialise a synchronous handle)" : "blocked")}, " +
                          $"token cancelled: wait {(stopped ? "ended" : "still in the driver after 1 s")}");
        unsafe
        {
            CancelIoEx(h, null); // only so this check leaves nothing behind
        }
        await Task.WhenAny(Task.WhenAll(wait, stats), Task.Delay(TimeSpan.FromSeconds(2))).ConfigureAwait(false);
        return pending && !stopped;
    }

    private static unsafe int SyncControl(SafeFileHandle h, uint code, byte[] input, byte[] output)
    {
        fixed (byte* i = input)
        fixed (byte* o = output)
        {
            return DeviceIoControl(h, code, i, (uint)input.Length, o, (uint)output.Length, out _, IntPtr.Zero) ? 0 : Marshal.GetLastPInvokeError();
        }
    }

    [LibraryImport("kernel32.dll", SetLastError = true, StringMarshalling = StringMarshalling.Utf16)]
    private static partial SafeFileHandle CreateFileW(string name, uint access, uint share, IntPtr security, uint disposition, uint flags, IntPtr template);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static unsafe partial bool DeviceIoControl(SafeFileHandle device, uint code, byte* inBuffer, uint inSize,
        byte* outBuffer, uint outSize, out uint returned, IntPtr overlapped);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static unsafe partial bool CancelIoEx(SafeFileHandle device, NativeOverlapped* overlapped);
}
