using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using Microsoft.Win32.SafeHandles;

namespace SieveQ.Policy.Hosting;

/// <summary>
/// The Win32 calls behind <see cref="RegistryPolicySource"/>. Compiled on every platform, called only on
/// Windows. Under Wine (wine-check) RegNotifyChangeKeyValue runs for real; the userenv calls are Wine 8.0 stubs.
/// </summary>
[SupportedOSPlatform("windows")]
internal static partial class GroupPolicyNative
{
    public const uint RegNotifyChangeName = 0x00000001;
    public const uint RegNotifyChangeLastSet = 0x00000004;
    /// <summary>Windows 8 and later: the registration outlives the thread that made it.</summary>
    public const uint RegNotifyThreadAgnostic = 0x10000000;
    public const uint RefreshPolicyForce = 0x00000001;

    [LibraryImport("advapi32.dll")]
    public static partial int RegNotifyChangeKeyValue(
        SafeRegistryHandle key,
        [MarshalAs(UnmanagedType.Bool)] bool watchSubtree,
        uint notifyFilter,
        SafeWaitHandle changeEvent,
        [MarshalAs(UnmanagedType.Bool)] bool asynchronous);

    [LibraryImport("userenv.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool RegisterGPNotification(SafeWaitHandle changeEvent, [MarshalAs(UnmanagedType.Bool)] bool machine);

    [LibraryImport("userenv.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool UnregisterGPNotification(SafeWaitHandle changeEvent);

    [LibraryImport("userenv.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool RefreshPolicyEx([MarshalAs(UnmanagedType.Bool)] bool machine, uint options);

    [LibraryImport("userenv.dll", SetLastError = true)]
    public static partial IntPtr EnterCriticalPolicySection([MarshalAs(UnmanagedType.Bool)] bool machine);

    [LibraryImport("userenv.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    public static partial bool LeaveCriticalPolicySection(IntPtr section);
}
