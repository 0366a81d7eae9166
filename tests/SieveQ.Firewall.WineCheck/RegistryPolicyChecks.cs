using System.Diagnostics;
using System.Runtime.InteropServices;
using Microsoft.Win32;
using Microsoft.Win32.SafeHandles;
using SieveQ.Policy;
using SieveQ.Policy.Hosting;

namespace SieveQ.Firewall.WineCheck;

/// <summary>
/// The agent's Group Policy reader (RegistryPolicySource, composed into the agent's policy by PolicyMonitor exactly as
/// `sieveq agent` does) against Wine's registry: values written as installer/policy/SieveQ.admx writes them, read back,
/// a refused value, the RegNotifyChangeKeyValue watcher, and the key removed. Needs no driver: it runs before the
/// driver checks. Wine 8.0's userenv is a stub (RegisterGPNotification accepts and never signals,
/// EnterCriticalPolicySection NULL), so only the registry notification can deliver a change here; the probe below
/// prints what Wine answers.
/// </summary>
internal sealed partial class Checks
{
    // Changes must come through the registry notification: the watcher's fallback poll is 30 s and its
    // re-check 5 minutes, so a notice within this bound cannot have come from either.
    private static readonly TimeSpan NoticeBound = TimeSpan.FromSeconds(5);

    private const string ShaA = "50d858e0985ecc7f60418aaf0cc5ab587f42c2570a884095a9e8ccacd0f6545c";
    private const string ShaB = "d4f0bc5a29de06b510f9aa428f1eedba926012b591fef7a518e776a7c9bd1824";

    private static RegistryKey Hklm() => RegistryKey.OpenBaseKey(RegistryHive.LocalMachine, RegistryView.Registry64);

    private async Task RegistryPolicyAsync()
    {
        try
        {
            using var hklm = Hklm();
            hklm.DeleteSubKeyTree(PolicyLayout.RootKeyPath, throwOnMissingSubKey: false);
        }
        catch (Exception e)
        {
            Check("registry policy: the key could be cleared", false, $"{e.GetType().Name}: {e.Message}");
            return;
        }
        ProbeGroupPolicyNotification();

        var expected = WriteAdmxPolicy();
        using var source = new RegistryPolicySource();
        await CheckAsync("registry policy: six ADMX policies' values written under HKLM (lists, BootTimeFilters on) read back as written", () =>
        {
            var evaluation = PolicyLoader.Evaluate(source.Read());
            if (!evaluation.IsValid || evaluation.Policy != expected)
            {
                Console.WriteLine($"  read: valid={evaluation.IsValid} errors=[{string.Join("; ", evaluation.Errors)}] policy={evaluation.Policy}");
                return Task.FromResult(false);
            }
            // PreSqEndpoints 1, 2, 10: the numeric order Group Policy numbers them in, not the names' string order.
            return Task.FromResult(evaluation.Warnings.IsEmpty && evaluation.Policy!.PreSqEndpoints[2].Contains("presq-10", StringComparison.Ordinal));
        }).ConfigureAwait(false);

        var applied = new List<(AppliedPolicy Policy, TimeSpan At)>();
        var rejected = new List<(PolicyRejectedEventArgs Alarm, TimeSpan At)>();
        var clock = Stopwatch.StartNew();
        // 100 ms of quiet before a read, as the agent's 250 ms: a burst of writes is read once.
        using var monitor = new PolicyMonitor(source, settleDelay: TimeSpan.FromMilliseconds(100));
        monitor.Applied += (_, e) => { lock (applied) { applied.Add((e.Applied, clock.Elapsed)); } };
        monitor.Rejected += (_, e) => { lock (rejected) { rejected.Add((e, clock.Elapsed)); } };
        await CheckAsync("registry policy: the monitor's first read puts the written policy in force", () =>
        {
            monitor.Start();
            return Task.FromResult(monitor.Policy == expected && monitor.Current.Generation == 1);
        }).ConfigureAwait(false);
        long generation = monitor.Current.Generation;

        await CheckAsync("registry policy: BootTimeFilters = 2 is refused with an error naming it, the last good policy kept", async () =>
        {
            var since = clock.Elapsed;
            SetRoot(k => k.SetValue(PolicyLayout.BootTimeFilters, 2, RegistryValueKind.DWord));
            var alarm = await WaitForAsync(rejected, since, _ => true).ConfigureAwait(false);
            if (alarm is null)
            {
                return false;
            }
            Console.WriteLine($"  refused after {(alarm.Value.At - since).TotalMilliseconds:F0} ms: {string.Join("; ", alarm.Value.Item.Errors)}");
            return alarm.Value.Item.Errors.Any(e => e.Contains(PolicyLayout.BootTimeFilters, StringComparison.Ordinal)) &&
                   monitor.Policy == expected && monitor.Current.Generation == generation && monitor.ActiveAlarm is not null;
        }).ConfigureAwait(false);

        await CheckAsync("registry policy: DriverMode as REG_MULTI_SZ is refused naming the registry type, the last good policy kept", async () =>
        {
            var since = clock.Elapsed;
            SetRoot(k =>
            {
                k.SetValue(PolicyLayout.BootTimeFilters, 1, RegistryValueKind.DWord);
                k.SetValue(PolicyLayout.DriverMode, new[] { "audit" }, RegistryValueKind.MultiString);
            });
            var alarm = await WaitForAsync(rejected, since, a => a.Errors.Any(e => e.Contains(PolicyLayout.DriverMode, StringComparison.Ordinal))).ConfigureAwait(false);
            if (alarm is null)
            {
                return false;
            }
            Console.WriteLine($"  refused after {(alarm.Value.At - since).TotalMilliseconds:F0} ms: {string.Join("; ", alarm.Value.Item.Errors)}");
            return alarm.Value.Item.Errors.Any(e => e.Contains("REG_MULTI_SZ", StringComparison.Ordinal)) &&
                   monitor.Policy == expected && monitor.Current.Generation == generation;
        }).ConfigureAwait(false);

        var changed = expected with
        {
            DriverMode = DriverMode.Enforce,
            DefaultRateLimits = expected.DefaultRateLimits with { ConnectionsPerSecond = 77 },
            PreSqEndpoints = expected.PreSqEndpoints.Add("https://presq-11.example.org:7401"),
        };
        await CheckAsync($"registry policy: a valid change (a value and a list entry) is noticed by the RegNotifyChangeKeyValue watcher and applied within {NoticeBound.TotalSeconds:F0} s", async () =>
        {
            var since = clock.Elapsed;
            SetRoot(k =>
            {
                k.SetValue(PolicyLayout.DriverMode, "enforce", RegistryValueKind.String);
                k.SetValue(PolicyLayout.DefaultConnectionsPerSecond, 77, RegistryValueKind.DWord);
                using var list = k.CreateSubKey(PolicyLayout.PreSqEndpointsKey);
                list.SetValue("11", "https://presq-11.example.org:7401", RegistryValueKind.String);
            });
            var got = await WaitForAsync(applied, since, a => a.Policy == changed).ConfigureAwait(false);
            Console.WriteLine(got is null ? $"  not applied; in force: generation {monitor.Current.Generation}"
                                          : $"  applied after {(got.Value.At - since).TotalMilliseconds:F0} ms, generation {got.Value.Item.Generation}");
            return got is not null && monitor.Policy == changed && monitor.ActiveAlarm is null;
        }).ConfigureAwait(false);

        // The registration is one-shot: a watcher that did not re-arm would see the first change above and no other.
        await CheckAsync("registry policy: BootTimeFilters turned off (0) later is noticed too: the watch re-armed after each notice", async () =>
        {
            var since = clock.Elapsed;
            SetRoot(k => k.SetValue(PolicyLayout.BootTimeFilters, 0, RegistryValueKind.DWord));
            var got = await WaitForAsync(applied, since, a => a.Policy == (changed with { BootTimeFilters = false })).ConfigureAwait(false);
            return got is not null && !monitor.Policy.BootTimeFilters;
        }).ConfigureAwait(false);

        await CheckAsync("registry policy: deleting the SieveQ key is noticed and gives the not-configured defaults", async () =>
        {
            var since = clock.Elapsed;
            using (var hklm = Hklm())
            {
                hklm.DeleteSubKeyTree(PolicyLayout.RootKeyPath);
            }
            var got = await WaitForAsync(applied, since, a => a.Policy == AgentPolicy.NotConfigured).ConfigureAwait(false);
            var direct = source.Read();
            return got is not null && direct.Fingerprint == PolicySnapshot.NotConfiguredFingerprint &&
                   monitor.Policy.DriverMode == DriverMode.Enforce && monitor.Policy.DefaultRateLimits == RateLimits.Default &&
                   !monitor.Policy.BootTimeFilters && monitor.Policy.PreSqEndpoints.IsEmpty && monitor.Policy.ApplicationWhitelist.IsEmpty;
        }).ConfigureAwait(false);

        await CheckAsync("registry policy: the key written again after its removal is noticed (the parent key is watched)", async () =>
        {
            var since = clock.Elapsed;
            var again = WriteAdmxPolicy();
            var got = await WaitForAsync(applied, since, a => a.Policy == again).ConfigureAwait(false);
            return got is not null;
        }).ConfigureAwait(false);

        monitor.Dispose();
        await CheckAsync("registry policy: disposing the source ends its watch thread at once", () =>
        {
            var sw = Stopwatch.StartNew();
            source.Dispose();
            return Task.FromResult(sw.Elapsed < TimeSpan.FromSeconds(2));
        }).ConfigureAwait(false);
        try
        {
            using var hklm = Hklm();
            hklm.DeleteSubKeyTree(PolicyLayout.RootKeyPath, throwOnMissingSubKey: false);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            Console.WriteLine($"  registry policy: cleanup failed: {e.Message}");
        }
    }

    /// <summary>Writes the values six of SieveQ.admx's seven policies write when enabled; returns the policy they mean.</summary>
    private static AgentPolicy WriteAdmxPolicy()
    {
        using var hklm = Hklm();
        using var root = hklm.CreateSubKey(PolicyLayout.RootKeyPath);
        // <text>: REG_SZ; <enum> items with <string>: REG_SZ; <decimal>: REG_DWORD; the BootTimeFilters
        // enabledValue <decimal value="1"/>: REG_DWORD 1.
        root.SetValue(PolicyLayout.ControllerUrl, "https://controller.example.org", RegistryValueKind.String);
        root.SetValue(PolicyLayout.EnrolmentId, "host-17", RegistryValueKind.String);
        root.SetValue(PolicyLayout.KeyStorageProvider, "software", RegistryValueKind.String);
        // Not the RuleSet policy: validating RuleSetSigner imports an ECDSA P-256 key, which Wine 8.0's CNG
        // cannot (0x80090029), so any policy with it is refused here (and the first run that tried it crashed
        // later in the runtime, as ../shared/notes/wine.md says of exceptions through native code). Its values are REG_SZ.
        root.SetValue(PolicyLayout.DriverMode, "audit", RegistryValueKind.String);
        root.SetValue(PolicyLayout.DefaultMessagesPerSecond, 5000, RegistryValueKind.DWord);
        root.SetValue(PolicyLayout.DefaultMessageBurst, 8000, RegistryValueKind.DWord);
        root.SetValue(PolicyLayout.DefaultConnectionsPerSecond, 50, RegistryValueKind.DWord);
        root.SetValue(PolicyLayout.BootTimeFilters, 1, RegistryValueKind.DWord);
        // <list valuePrefix=""> in its own key: values named 1, 2, 3... holding the entries.
        using (var endpoints = root.CreateSubKey(PolicyLayout.PreSqEndpointsKey))
        {
            endpoints.SetValue("1", "http://presq-1.example.org:7401", RegistryValueKind.String);
            endpoints.SetValue("2", "http://presq-2.example.org:7401", RegistryValueKind.String);
            endpoints.SetValue("10", "https://presq-10.example.org:7401", RegistryValueKind.String);
        }
        // <list explicitValue="true">: value name = image path, data = SHA-256.
        using (var whitelist = root.CreateSubKey(PolicyLayout.ApplicationWhitelistKey))
        {
            whitelist.SetValue(@"C:\Program Files\Example\app.exe", ShaA, RegistryValueKind.String);
            whitelist.SetValue(@"\Device\HarddiskVolume2\Tools\sync.exe", ShaB, RegistryValueKind.String);
        }
        return new AgentPolicy
        {
            Enrolment = new EnrolmentSettings("https://controller.example.org", "host-17", KeyStorageProvider.Software),
            DriverMode = DriverMode.Audit,
            DefaultRateLimits = new RateLimits(5000, 8000, 50),
            BootTimeFilters = true,
            PreSqEndpoints = ["http://presq-1.example.org:7401", "http://presq-2.example.org:7401", "https://presq-10.example.org:7401"],
            ApplicationWhitelist = [new WhitelistEntry(@"C:\Program Files\Example\app.exe", ShaA), new WhitelistEntry(@"\Device\HarddiskVolume2\Tools\sync.exe", ShaB)],
        };
    }

    private static void SetRoot(Action<RegistryKey> write)
    {
        using var hklm = Hklm();
        using var root = hklm.CreateSubKey(PolicyLayout.RootKeyPath);
        write(root);
    }

    /// <summary>The first event after <paramref name="since"/> that matches, within the bound; null if none came.</summary>
    private static async Task<(T Item, TimeSpan At)?> WaitForAsync<T>(List<(T, TimeSpan)> events, TimeSpan since, Func<T, bool> match)
    {
        var sw = Stopwatch.StartNew();
        while (sw.Elapsed < NoticeBound)
        {
            lock (events)
            {
                foreach (var (item, at) in events)
                {
                    if (at >= since && match(item))
                    {
                        return (item, at);
                    }
                }
            }
            await Task.Delay(20).ConfigureAwait(false);
        }
        return null;
    }

    /// <summary>What Wine's userenv answers to the watcher's Group Policy notification (printed, not checked).</summary>
    private static void ProbeGroupPolicyNotification()
    {
        using var applied = new EventWaitHandle(false, EventResetMode.AutoReset);
        try
        {
            bool ok = RegisterGPNotification(applied.SafeWaitHandle, true);
            int error = Marshal.GetLastPInvokeError();
            Console.WriteLine($"  RegisterGPNotification: {(ok ? "registered" : $"FALSE, error {error}")} (a stub in Wine 8.0 that never signals: only the registry notification is checked)");
            if (ok)
            {
                UnregisterGPNotification(applied.SafeWaitHandle);
            }
        }
        catch (EntryPointNotFoundException e)
        {
            Console.WriteLine($"  RegisterGPNotification: not exported ({e.Message})");
        }
    }

    [LibraryImport("userenv.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static partial bool RegisterGPNotification(SafeWaitHandle changeEvent, [MarshalAs(UnmanagedType.Bool)] bool machine);

    [LibraryImport("userenv.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static partial bool UnregisterGPNotification(SafeWaitHandle changeEvent);
}
