using System.Buffers.Binary;
using System.Globalization;
using System.Net.Sockets;

namespace SieveQ.Agent.Identity;

/// <summary>
/// Who is at the other end of a local connection, as the kernel says (never as the caller says):
/// SO_PEERCRED on a Unix socket gives the process, user and group that connected; on Windows the named pipe
/// gives the client's process (<see cref="NamedPipeCaller"/>), whose token gives its user SID. A Windows caller
/// has no uid or gid: they are <see cref="NoId"/> there and <see cref="UserSid"/> says who it is.
/// </summary>
public sealed record PeerCredentials(int Pid, int Uid, int Gid, string? Executable, string? UserSid = null)
{
    /// <summary>Uid and gid of a Windows caller, whose identity is its SID (-1 is no Unix user: chown's "unchanged").</summary>
    public const int NoId = -1;

    private const int SolSocket = 1;
    private const int SoPeerCred = 17;

    /// <summary>Reads SO_PEERCRED (Linux: <c>struct ucred { int pid; int uid; int gid; }</c>); null where the OS has no such option.</summary>
    public static PeerCredentials? FromSocket(Socket socket)
    {
        ArgumentNullException.ThrowIfNull(socket);
        if (!OperatingSystem.IsLinux() || socket.AddressFamily != AddressFamily.Unix)
        {
            return null;
        }
        Span<byte> ucred = stackalloc byte[12];
        try
        {
            if (socket.GetRawSocketOption(SolSocket, SoPeerCred, ucred) != ucred.Length)
            {
                return null;
            }
        }
        catch (SocketException)
        {
            return null;
        }
        var pid = BinaryPrimitives.ReadInt32LittleEndian(ucred);
        var uid = BinaryPrimitives.ReadInt32LittleEndian(ucred[4..]);
        var gid = BinaryPrimitives.ReadInt32LittleEndian(ucred[8..]);
        return new PeerCredentials(pid, uid, gid, ExecutableOf(pid));
    }

    /// <summary>The program the process runs (<c>/proc/PID/exe</c>); null when the process is gone or not ours to inspect.</summary>
    public static string? ExecutableOf(int pid)
    {
        try
        {
            return File.ResolveLinkTarget($"/proc/{pid.ToString(CultureInfo.InvariantCulture)}/exe", returnFinalTarget: false)?.FullName;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    /// <summary>The effective uid of this process (from /proc, so no native call is needed); null off Linux.</summary>
    public static int? CurrentUid()
    {
        if (!OperatingSystem.IsLinux())
        {
            return null;
        }
        foreach (var line in File.ReadLines("/proc/self/status"))
        {
            if (line.StartsWith("Uid:", StringComparison.Ordinal))
            {
                var fields = line[4..].Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
                return int.Parse(fields[1], CultureInfo.InvariantCulture);
            }
        }
        return null;
    }

    public override string ToString() => UserSid is null
        ? $"pid {Pid} uid {Uid} gid {Gid} exe {Executable ?? "?"}"
        : $"pid {Pid} sid {UserSid} exe {Executable ?? "?"}";
}
