using System.Buffers.Binary;
using System.Globalization;
using System.Text.RegularExpressions;
using SieveQ.Firewall.Bridge;

namespace SieveQ.Firewall.Tests;

/// <summary>
/// IOCTL_SQFW_SET_BOOT_FILTERS as both bridges encode and read it: the request bytes are put through the driver's own
/// request check (sqfw_boot_request_check in libsieveqfw.so, the code the driver runs), the code and magic are read
/// from the driver's headers, and the answers are the bytes of sqfw_boot_filters_out.
/// </summary>
public sealed partial class BootFilterMessageTests
{
    public BootFilterMessageTests() => NativeLibraryFixture.EnsureLoaded();

    private static string Header(string relative) => File.ReadAllText(Path.Combine(NativeLibraryFixture.DriverDirectory, relative));

    private static byte[] Answer(uint status, uint enabled, uint filters)
    {
        var reply = new byte[16];
        BinaryPrimitives.WriteUInt32LittleEndian(reply, status);
        BinaryPrimitives.WriteUInt32LittleEndian(reply.AsSpan(4), enabled);
        BinaryPrimitives.WriteUInt32LittleEndian(reply.AsSpan(8), filters);
        return reply;
    }

    [Fact]
    public void The_request_is_the_16_bytes_of_sqfw_boot_filters_in()
    {
        Assert.Equal("424F4F54" + "01000000" + "00000000" + "00000000", Convert.ToHexString(BootFilterMessages.Request(true)));
        Assert.Equal("424F4F54" + "00000000" + "00000000" + "00000000", Convert.ToHexString(BootFilterMessages.Request(false)));
    }

    [Fact]
    public void The_code_and_magic_are_the_driver_headers()
    {
        var code = IoctlLine().Match(Header("wfp/sqfw_ioctl.h"));
        Assert.True(code.Success, "IOCTL_SQFW_SET_BOOT_FILTERS not found in sqfw_ioctl.h");
        uint function = uint.Parse(code.Groups[1].Value, NumberStyles.HexNumber, CultureInfo.InvariantCulture);
        Assert.Equal("SQFW_WRITE", code.Groups[2].Value);
        uint fromHeader = (0x8A5Fu << 16) | (2u << 14) | (function << 2);
        Assert.Equal(BootFilterMessages.IoctlCode, fromHeader);

        var magic = MagicLine().Match(Header("core/boot_rules.h"));
        Assert.True(magic.Success, "SQFW_BOOT_MAGIC not found in boot_rules.h");
        Assert.Equal(uint.Parse(magic.Groups[1].Value, NumberStyles.HexNumber, CultureInfo.InvariantCulture),
            BinaryPrimitives.ReadUInt32LittleEndian(BootFilterMessages.Request(true)));
    }

    [Fact]
    public void The_driver_request_check_takes_both_requests_and_reads_back_what_was_asked()
    {
        var on = CoreDriverBridge.CheckBootFilters(BootFilterMessages.Request(true));
        var off = CoreDriverBridge.CheckBootFilters(BootFilterMessages.Request(false));

        // The core read enable 1 from the bytes: the only answer it gives a well-formed "on" is "not on this platform".
        Assert.Equal((true, BootFilterFailure.NotOnThisPlatform, (uint?)null), (on.Enabled, on.Failure, on.StoredFilters));
        Assert.Equal((false, BootFilterFailure.None, (uint?)0), (off.Enabled, off.Failure, off.StoredFilters));
    }

    public static TheoryData<string, byte[]> MalformedRequests()
    {
        byte[] Edit(Action<byte[]> change)
        {
            var bytes = BootFilterMessages.Request(false);
            change(bytes);
            return bytes;
        }
        return new()
        {
            { "wrong magic", Edit(b => b[0] ^= 1) },
            { "enable 2", Edit(b => b[4] = 2) },
            { "first reserved word set", Edit(b => b[8] = 1) },
            { "second reserved word set", Edit(b => b[15] = 0x80) },
            { "15 bytes", BootFilterMessages.Request(false)[..15] },
            { "17 bytes", [.. BootFilterMessages.Request(false), 0] },
        };
    }

    [Theory]
    [MemberData(nameof(MalformedRequests))]
    public void The_driver_request_check_refuses_malformed_requests(string what, byte[] request)
    {
        var result = CoreDriverBridge.CheckBootFilters(request);
        Assert.True(result.Failure == BootFilterFailure.Refused, what);
        Assert.Null(result.StoredFilters);
    }

    [Fact]
    public async Task The_portable_bridge_keeps_nothing_and_says_why()
    {
        await using var bridge = new CoreDriverBridge();
        var on = await bridge.SetBootFiltersAsync(true, CancellationToken.None);
        var off = await bridge.SetBootFiltersAsync(false, CancellationToken.None);

        Assert.False(on.Succeeded);
        Assert.Equal(BootFilterFailure.NotOnThisPlatform, on.Failure);
        Assert.Contains("Windows WFP driver", on.Message, StringComparison.Ordinal);
        Assert.True(off.Succeeded);
        Assert.Equal(0u, off.StoredFilters);
    }

    [Fact]
    public void A_stored_set_is_read_as_its_count()
    {
        var on = BootFilterMessages.Reply(true, Answer(0, 1, 16), 16);
        var off = BootFilterMessages.Reply(false, Answer(0, 0, 0), 16);

        Assert.Equal((true, BootFilterFailure.None, (uint?)16), (on.Succeeded, on.Failure, on.StoredFilters));
        Assert.Equal((true, (uint?)0), (off.Succeeded, off.StoredFilters));
    }

    [Fact]
    public void BFE_not_running_is_its_own_failure_with_nothing_claimed()
    {
        var result = BootFilterMessages.Reply(true, Answer(0xC00000A3, 1, 0xFFFFFFFF), 16);

        Assert.Equal((BootFilterFailure.BfeNotRunning, (uint?)null, 0xC00000A3u), (result.Failure, result.StoredFilters, result.Status));
        Assert.Contains("Base Filtering Engine is not running", result.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_change_WFP_refused_carries_its_NTSTATUS()
    {
        var result = BootFilterMessages.Reply(false, Answer(0xC000009A, 0, 0xFFFFFFFF), 16);

        Assert.Equal((BootFilterFailure.Refused, (uint?)null, 0xC000009Au), (result.Failure, result.StoredFilters, result.Status));
        Assert.Contains("0xC000009A", result.Message, StringComparison.Ordinal);
    }

    public static TheoryData<string, bool, byte[], uint> UnexpectedReplies => new()
    {
        // a short answer is refused even when the buffer happens to hold a good one
        { "8 bytes returned", true, Answer(0, 1, 16), 8 },
        { "nothing returned", false, Answer(0, 0, 0), 0 },
        { "a buffer shorter than the answer", true, Answer(0, 1, 16)[..12], 16 },
        { "the answer to another request", true, Answer(0, 0, 0), 16 },
        { "success but unchanged", true, Answer(0, 1, 0xFFFFFFFF), 16 },
        { "on with no filters", true, Answer(0, 1, 0), 16 },
        { "off with filters left", false, Answer(0, 0, 16), 16 },
    };

    [Theory]
    [MemberData(nameof(UnexpectedReplies))]
    public void An_answer_that_is_not_one_is_not_read_as_success(string what, bool enabled, byte[] reply, uint returned)
    {
        var result = BootFilterMessages.Reply(enabled, reply, returned);
        Assert.True(result.Failure == BootFilterFailure.UnexpectedReply, what);
        Assert.Null(result.StoredFilters);
    }

    [Fact]
    public void A_driver_without_the_code_is_told_apart_from_a_refused_request()
    {
        // STATUS_INVALID_DEVICE_REQUEST and STATUS_INVALID_PARAMETER as DeviceIoControl reports them.
        var old = BootFilterMessages.Error(true, 1);
        var refused = BootFilterMessages.Error(true, 87);

        Assert.Equal(BootFilterFailure.NotSupportedByDriver, old!.Failure);
        Assert.Contains("the driver does not support boot-time filters", old.Message, StringComparison.Ordinal);
        Assert.Equal(BootFilterFailure.Refused, refused!.Failure);
        Assert.Null(BootFilterMessages.Error(true, 5)); // access denied: about the handle, not the request
    }

    [GeneratedRegex(@"#define\s+IOCTL_SQFW_SET_BOOT_FILTERS\s+SQFW_CTL\(0x([0-9A-Fa-f]+)u,\s*(\w+)\)")]
    private static partial Regex IoctlLine();

    [GeneratedRegex(@"#define\s+SQFW_BOOT_MAGIC\s+0x([0-9A-Fa-f]+)u")]
    private static partial Regex MagicLine();
}
