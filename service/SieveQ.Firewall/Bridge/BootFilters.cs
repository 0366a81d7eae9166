using System.Buffers.Binary;
using System.Globalization;

namespace SieveQ.Firewall.Bridge;

/// <summary>Why a change of the boot-time filters did not happen.</summary>
public enum BootFilterFailure
{
    None,

    /// <summary>BFE is not running, so there is no store to change (STATUS_DEVICE_NOT_READY); nothing was changed.</summary>
    BfeNotRunning,

    /// <summary>WFP refused the change (its NTSTATUS in the result) or the driver refused the request; BFE kept what it had.</summary>
    Refused,

    /// <summary>The driver predates IOCTL_SQFW_SET_BOOT_FILTERS (STATUS_INVALID_DEVICE_REQUEST).</summary>
    NotSupportedByDriver,

    /// <summary>This host has no WFP (the portable core): nothing can be enforced before the agent starts.</summary>
    NotOnThisPlatform,

    /// <summary>The driver's answer was not the 16-byte sqfw_boot_filters_out for this request.</summary>
    UnexpectedReply,
}

/// <summary>
/// What became of one request for the boot-time filters. <see cref="StoredFilters"/> is how many of the driver's
/// boot-time filters BFE holds now (all of them or 0); null when the change failed and BFE kept what it had.
/// </summary>
public sealed record BootFiltersResult(bool Enabled, BootFilterFailure Failure, uint? StoredFilters, uint Status, string Message)
{
    public bool Succeeded => Failure == BootFilterFailure.None;
}

/// <summary>
/// IOCTL_SQFW_SET_BOOT_FILTERS's request and answer (driver/core/boot_rules.h sqfw_boot_filters_in,
/// driver/wfp/sqfw_ioctl.h sqfw_boot_filters_out), both little-endian, shared by both bridges.
/// </summary>
internal static class BootFilterMessages
{
    /// <summary>SQFW_CTL(0x808, SQFW_WRITE), METHOD_BUFFERED.</summary>
    public const uint IoctlCode = (0x8A5Fu << 16) | (2u << 14) | (0x808u << 2);
    public const int RequestBytes = 16;
    public const int ReplyBytes = 16;
    public const uint Magic = 0x544F4F42; // "BOOT"
    public const uint Unchanged = 0xFFFFFFFF;
    public const uint StatusDeviceNotReady = 0xC00000A3;
    public const int ErrorInvalidFunction = 1;
    public const int ErrorInvalidParameter = 87;

    public static byte[] Request(bool enabled)
    {
        var request = new byte[RequestBytes];
        BinaryPrimitives.WriteUInt32LittleEndian(request, Magic);
        BinaryPrimitives.WriteUInt32LittleEndian(request.AsSpan(4), enabled ? 1u : 0u);
        return request; // two reserved words, zero
    }

    /// <summary>The driver's answer; <paramref name="returned"/> is what it said it wrote, checked before anything is read.</summary>
    public static BootFiltersResult Reply(bool enabled, ReadOnlySpan<byte> reply, uint returned)
    {
        if (returned != ReplyBytes || reply.Length < ReplyBytes)
        {
            return Failed(enabled, BootFilterFailure.UnexpectedReply, 0, $"the driver answered {returned} bytes, not the {ReplyBytes} of sqfw_boot_filters_out");
        }
        uint status = BinaryPrimitives.ReadUInt32LittleEndian(reply);
        uint echoed = BinaryPrimitives.ReadUInt32LittleEndian(reply[4..]);
        uint filters = BinaryPrimitives.ReadUInt32LittleEndian(reply[8..]);
        if (echoed != (enabled ? 1u : 0u))
        {
            return Failed(enabled, BootFilterFailure.UnexpectedReply, status, $"the driver answered for enable {echoed}, not for this request");
        }
        if (status == 0)
        {
            // Success means all of the filters or none: a count of "unchanged" or on without filters is not an answer to this request.
            return filters == Unchanged || (filters == 0) == enabled
                ? Failed(enabled, BootFilterFailure.UnexpectedReply, status, $"the driver reported success with {Count(filters)} filters")
                : new BootFiltersResult(enabled, BootFilterFailure.None, filters, 0,
                    enabled ? $"{filters} boot-time filters stored in BFE" : "no boot-time filters stored in BFE");
        }
        return status == StatusDeviceNotReady
            ? Failed(enabled, BootFilterFailure.BfeNotRunning, status, "the Base Filtering Engine is not running; nothing was changed")
            : Failed(enabled, BootFilterFailure.Refused, status, $"WFP refused the change (NTSTATUS 0x{status:X8}); BFE kept what it had");
    }

    /// <summary>A request the driver failed as a whole (a Win32 error from DeviceIoControl); null for errors that are not about this request.</summary>
    public static BootFiltersResult? Error(bool enabled, int win32Error) => win32Error switch
    {
        ErrorInvalidFunction => Failed(enabled, BootFilterFailure.NotSupportedByDriver, 0, "the driver does not support boot-time filters (install the sieveqfw.sys that ships with this agent)"),
        ErrorInvalidParameter => Failed(enabled, BootFilterFailure.Refused, 0, "the driver refused the request as malformed"),
        _ => null,
    };

    public static BootFiltersResult Failed(bool enabled, BootFilterFailure failure, uint status, string message) =>
        new(enabled, failure, null, status, message);

    private static string Count(uint filters) => filters == Unchanged ? "\"unchanged\"" : filters.ToString(CultureInfo.InvariantCulture);
}
