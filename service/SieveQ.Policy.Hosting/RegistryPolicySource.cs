using System.ComponentModel;
using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using System.Security;
using Microsoft.Win32;

namespace SieveQ.Policy.Hosting;

/// <summary>
/// The policy source on Windows: HKLM\SOFTWARE\Policies\SieveQ as Group Policy writes it from
/// installer/policy/SieveQ.admx. Run under Wine by driver/Makefile's wine-check (installer/policy/README.md says
/// what that covers and what it cannot).
/// </summary>
[SupportedOSPlatform("windows")]
public sealed class RegistryPolicySource : IPolicySource
{
    // The parent is watched because the SieveQ key itself is created and deleted as policies come and go.
    private const string WatchedKeyPath = @"SOFTWARE\Policies";
    // Notices can be lost (a key deleted and recreated under the watch); a slow re-check bounds the damage.
    private static readonly TimeSpan RecheckInterval = TimeSpan.FromMinutes(5);
    private static readonly TimeSpan FallbackPollInterval = TimeSpan.FromSeconds(30);

    private readonly Lock gate = new();
    private readonly ManualResetEvent stop = new(false);
    private Thread? watchThread;
    private bool disposed;

    public event EventHandler? Changed;

    public string Name => $@"registry HKLM\{PolicyLayout.RootKeyPath}";

    /// <summary>Asks the Group Policy engine to apply machine policy now (as <c>gpupdate /target:computer</c>).</summary>
    public static void RequestMachinePolicyRefresh(bool force)
    {
        if (!GroupPolicyNative.RefreshPolicyEx(true, force ? GroupPolicyNative.RefreshPolicyForce : 0))
        {
            throw new Win32Exception(Marshal.GetLastPInvokeError());
        }
    }

    public PolicySnapshot Read()
    {
        // Group Policy rewrites a list by deleting it and writing it again; inside the critical section no
        // policy is being applied, so the read sees one whole version, never a list caught half-written.
        // If entering fails (null handle) the read goes ahead: the "policy applied" notice that follows any
        // refresh makes the monitor read again once the engine is done.
        IntPtr section = GroupPolicyNative.EnterCriticalPolicySection(true);
        try
        {
            using var machine = MachineHive();
            using var key = machine.OpenSubKey(PolicyLayout.RootKeyPath, writable: false);
            if (key is null)
            {
                return PolicySnapshot.NotConfigured(Name);
            }
            var root = ReadKey(key, PolicyLayout.RootKeyPath, depth: 0);
            return PolicySnapshot.Read(Name, root, root.ComputeFingerprint());
        }
        catch (RegistryLayoutException e)
        {
            return PolicySnapshot.Failed(Name, e.Message, "layout:" + e.Message);
        }
        catch (Exception e) when (e is SecurityException or UnauthorizedAccessException or IOException)
        {
            return PolicySnapshot.Failed(Name, $"cannot read the policy key: {e.Message}", "unreadable:" + e.Message);
        }
        finally
        {
            if (section != IntPtr.Zero)
            {
                GroupPolicyNative.LeaveCriticalPolicySection(section);
            }
        }
    }

    public void StartWatching()
    {
        lock (gate)
        {
            ObjectDisposedException.ThrowIf(disposed, this);
            if (watchThread is not null)
            {
                return;
            }
            // A dedicated thread: the wait blocks for the life of the agent, which a pool thread should not do.
            watchThread = new Thread(Watch) { IsBackground = true, Name = "sieveq-policy-registry" };
            watchThread.Start();
        }
    }

    public void Dispose()
    {
        Thread? thread;
        lock (gate)
        {
            if (disposed)
            {
                return;
            }
            disposed = true;
            thread = watchThread;
            stop.Set();
        }
        // A thread still waiting on the event must not find it disposed under it.
        if (thread is null || thread.Join(TimeSpan.FromSeconds(5)))
        {
            stop.Dispose();
        }
    }

    private void Watch()
    {
        using var machine = MachineHive();
        using var policies = machine.OpenSubKey(WatchedKeyPath, writable: false);
        using var registryChanged = new AutoResetEvent(false);
        using var policyApplied = new AutoResetEvent(false);
        // The Group Policy notice comes once the engine has finished a refresh: the one moment a read is sure
        // to see a complete policy even if registry notices fired while it was being written.
        bool gpRegistered = GroupPolicyNative.RegisterGPNotification(policyApplied.SafeWaitHandle, true);
        try
        {
            WaitHandle[] handles = [stop, registryChanged, policyApplied];
            bool armed = false;
            while (true)
            {
                // The registration is one-shot: re-arm once it has fired, never while one is still pending.
                if (!armed && policies is not null)
                {
                    armed = GroupPolicyNative.RegNotifyChangeKeyValue(policies.Handle, true,
                        GroupPolicyNative.RegNotifyChangeName | GroupPolicyNative.RegNotifyChangeLastSet | GroupPolicyNative.RegNotifyThreadAgnostic,
                        registryChanged.SafeWaitHandle, true) == 0;
                }
                // Without a registry watch (no Policies key, or the call failed) fall back to polling.
                int woken = WaitHandle.WaitAny(handles, armed ? RecheckInterval : FallbackPollInterval);
                if (woken == 0)
                {
                    return;
                }
                if (woken == 1)
                {
                    armed = false;
                }
                Changed?.Invoke(this, EventArgs.Empty);
            }
        }
        finally
        {
            if (gpRegistered)
            {
                GroupPolicyNative.UnregisterGPNotification(policyApplied.SafeWaitHandle);
            }
        }
    }

    // Group Policy writes the native (64-bit) view; a 32-bit host process must not read its redirected twin.
    private static RegistryKey MachineHive() => RegistryKey.OpenBaseKey(RegistryHive.LocalMachine, RegistryView.Registry64);

    private static PolicyKey ReadKey(RegistryKey key, string path, int depth)
    {
        string[] valueNames = key.GetValueNames();
        if (valueNames.Length > PolicyLimits.MaxValuesPerKey)
        {
            throw new RegistryLayoutException($@"HKLM\{path}: {valueNames.Length} values, at most {PolicyLimits.MaxValuesPerKey} are read");
        }
        string[] subkeyNames = key.GetSubKeyNames();
        if (subkeyNames.Length > PolicyLimits.MaxSubkeysPerKey)
        {
            throw new RegistryLayoutException($@"HKLM\{path}: {subkeyNames.Length} subkeys, at most {PolicyLimits.MaxSubkeysPerKey} are read");
        }
        var values = new Dictionary<string, PolicyValue>(StringComparer.OrdinalIgnoreCase);
        foreach (string name in valueNames)
        {
            values[name] = ReadValue(key, path, name);
        }
        var subkeys = new Dictionary<string, PolicyKey>(StringComparer.OrdinalIgnoreCase);
        foreach (string name in subkeyNames)
        {
            if (depth + 1 >= PolicyLimits.MaxKeyDepth)
            {
                throw new RegistryLayoutException($@"HKLM\{path}\{name}: keys nest deeper than {PolicyLimits.MaxKeyDepth} levels");
            }
            using var subkey = key.OpenSubKey(name, writable: false);
            if (subkey is not null)
            {
                subkeys[name] = ReadKey(subkey, $@"{path}\{name}", depth + 1);
            }
        }
        return new PolicyKey(values, subkeys);
    }

    private static PolicyValue ReadValue(RegistryKey key, string path, string name)
    {
        var kind = key.GetValueKind(name);
        switch (kind)
        {
            case RegistryValueKind.String:
            case RegistryValueKind.ExpandString:
                string text = key.GetValue(name) as string ?? "";
                if (text.Length > PolicyLimits.MaxStringValueLength)
                {
                    throw new RegistryLayoutException($@"HKLM\{path}\{name}: a string is longer than {PolicyLimits.MaxStringValueLength} characters");
                }
                return PolicyValue.String(text);
            case RegistryValueKind.DWord:
                return PolicyValue.DWord(unchecked((uint)(int)key.GetValue(name, 0)!));
            default:
                return PolicyValue.Unsupported(TypeName(kind));
        }
    }

    // The names an administrator sees in regedit and reg.exe: the enum's own names are not all of them
    // (MultiString is REG_MULTI_SZ, not "REG_MULTISTRING").
    private static string TypeName(RegistryValueKind kind) => kind switch
    {
        RegistryValueKind.Binary => "REG_BINARY",
        RegistryValueKind.MultiString => "REG_MULTI_SZ",
        RegistryValueKind.QWord => "REG_QWORD",
        RegistryValueKind.None => "REG_NONE",
        _ => $"registry type {(int)kind}",
    };

    private sealed class RegistryLayoutException(string message) : Exception(message);
}
