using System.Net.Sockets;

namespace SieveQ.Agent.Hosting;

/// <summary>The agent's Unix socket file: refuse to start over a live agent, clear a dead one's file, restrict and remove it.</summary>
internal static class AgentEndpoint
{
    /// <summary>Owner and group may connect (connecting needs write permission); others may not.</summary>
    public const UnixFileMode SocketMode = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead | UnixFileMode.GroupWrite;

    public static void ClearStale(string path)
    {
        if (!File.Exists(path))
        {
            Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(path))!);
            return;
        }
        using var probe = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            probe.Connect(new UnixDomainSocketEndPoint(path));
        }
        catch (SocketException)
        {
            // Nobody listens: a crashed agent's leftover.
            File.Delete(path);
            return;
        }
        throw new InvalidOperationException($"an agent is already listening on {path}");
    }

    public static void Restrict(string path)
    {
        if (!OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(path, SocketMode);
        }
    }

    public static void Remove(string path)
    {
        try
        {
            File.Delete(path);
        }
        catch (IOException)
        {
            // already gone or replaced; nothing to clean
        }
    }
}
