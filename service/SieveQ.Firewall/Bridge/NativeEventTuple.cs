using System.Net;
using System.Text;
using SieveQ.Firewall.Identity;

namespace SieveQ.Firewall.Bridge;

/// <summary>The addresses and user of a driver event, shared by both bridges.</summary>
internal static class NativeEventTuple
{
    internal const int UserBytes = 184;

    public static unsafe IPAddress? Address(byte family, byte* bytes) => family switch
    {
        4 => new IPAddress(new ReadOnlySpan<byte>(bytes, 4)),
        6 => new IPAddress(new ReadOnlySpan<byte>(bytes, 16)),
        _ => null,
    };

    /// <summary>Adds the local end, user and class to an event built from the fields before them.</summary>
    public static unsafe FirewallEvent WithTuple(FirewallEvent ev, in NativeEvent n)
    {
        fixed (byte* local = n.LocalAddr)
        fixed (byte* user = n.User)
        {
            return ev with
            {
                Local = Address(n.Family, local),
                LocalPort = n.LocalPort,
                User = Encoding.UTF8.GetString(user, Math.Min((int)n.UserLen, UserBytes)),
                ClassId = n.ClassId,
                MappedImage = n.ImageFileId != 0 ? new MappedImage(n.ImageVolume, n.ImageFileId) : null,
            };
        }
    }
}
