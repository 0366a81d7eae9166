using System.Net;

namespace SieveQ.Controller.Audit;

/// <summary>
/// A network address as the audit log records it ("from where" a change was asked): IPv4 as dotted quads even when it
/// reached a dual-stack socket as an IPv4-mapped IPv6 address, so one host reads the same in every record.
/// </summary>
public static class AuditAddress
{
    /// <summary>The longest text of an IPv6 address in any notation (45 characters) with a numeric scope ("%4294967295").</summary>
    public const int MaxChars = 56;

    /// <summary>The address's text, or null when the call had none (an in-process pipe).</summary>
    public static string? Of(IPAddress? address)
    {
        if (address is null)
        {
            return null;
        }
        var text = (address.IsIPv4MappedToIPv6 ? address.MapToIPv4() : address).ToString();
        return text.Length <= MaxChars ? text : text[..MaxChars];
    }
}
