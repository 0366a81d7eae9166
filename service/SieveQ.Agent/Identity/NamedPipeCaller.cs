using System.ComponentModel;
using System.IO.Pipes;
using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using System.Security.Principal;
using Microsoft.Win32.SafeHandles;

namespace SieveQ.Agent.Identity;

/// <summary>
/// Who is at the other end of the agent's named pipe, as Windows says: the client's process id from the pipe
/// (GetNamedPipeClientProcessId), then that process's user SID from its primary token and its image path. The
/// process's token, not an impersonation of the pipe client, because the allow-list names the user a program runs
/// as, and a client may connect with an impersonation level that refuses impersonation.
/// </summary>
[SupportedOSPlatform("windows")]
public static partial class NamedPipeCaller
{
    private const uint ProcessQueryLimitedInformation = 0x1000;
    private const uint TokenQuery = 0x0008;

    /// <summary>The client of <paramref name="pipe"/>; throws <see cref="Win32Exception"/> when Windows cannot tell (the caller is then refused).</summary>
    public static PeerCredentials Identify(NamedPipeServerStream pipe)
    {
        ArgumentNullException.ThrowIfNull(pipe);
        if (!GetNamedPipeClientProcessId(pipe.SafePipeHandle, out uint pid))
        {
            throw new Win32Exception(Marshal.GetLastPInvokeError(), "GetNamedPipeClientProcessId");
        }
        using var process = OpenProcess(ProcessQueryLimitedInformation, false, pid);
        if (process.IsInvalid)
        {
            throw new Win32Exception(Marshal.GetLastPInvokeError(), $"OpenProcess of the pipe client (pid {pid})");
        }
        return new PeerCredentials((int)pid, PeerCredentials.NoId, PeerCredentials.NoId, ImageOf(process), UserSidOf(process));
    }

    /// <summary>The SID of this process's user: the agent's own user, always allowed.</summary>
    public static string CurrentUserSid()
    {
        using var identity = WindowsIdentity.GetCurrent();
        return identity.User?.Value ?? throw new InvalidOperationException("this process's token has no user SID");
    }

    private static string UserSidOf(SafeProcessHandle process)
    {
        if (!OpenProcessToken(process, TokenQuery, out var token))
        {
            throw new Win32Exception(Marshal.GetLastPInvokeError(), "OpenProcessToken of the pipe client");
        }
        using (token)
        {
            // WindowsIdentity reads TOKEN_USER from its own duplicate of the token.
            using var identity = new WindowsIdentity(token.DangerousGetHandle());
            return identity.User?.Value ?? throw new InvalidOperationException("the pipe client's token has no user SID");
        }
    }

    /// <summary>The Win32 path of the program the process runs; null when Windows does not give it (the caller is still identified by its SID).</summary>
    private static string? ImageOf(SafeProcessHandle process)
    {
        var buffer = new char[32768];
        int size = buffer.Length;
        return QueryFullProcessImageNameW(process, 0, buffer, ref size) ? new string(buffer, 0, size) : null;
    }

    [LibraryImport("kernel32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static partial bool GetNamedPipeClientProcessId(SafePipeHandle pipe, out uint clientProcessId);

    [LibraryImport("kernel32.dll", SetLastError = true)]
    private static partial SafeProcessHandle OpenProcess(uint desiredAccess, [MarshalAs(UnmanagedType.Bool)] bool inheritHandle, uint processId);

    [LibraryImport("advapi32.dll", SetLastError = true)]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static partial bool OpenProcessToken(SafeProcessHandle process, uint desiredAccess, out SafeAccessTokenHandle token);

    [LibraryImport("kernel32.dll", SetLastError = true, StringMarshalling = StringMarshalling.Utf16)]
    [return: MarshalAs(UnmanagedType.Bool)]
    private static partial bool QueryFullProcessImageNameW(SafeProcessHandle process, uint flags, [Out] char[] exeName, ref int size);
}
