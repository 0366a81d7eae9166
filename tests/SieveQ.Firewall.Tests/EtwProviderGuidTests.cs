using System.Diagnostics.Tracing;
using System.Text.RegularExpressions;

namespace SieveQ.Firewall.Tests;

/// The driver registers its TraceLogging provider under a GUID written into
/// driver/core/trace_meta.h; tools (and EventSource-based consumers) derive the
/// GUID from the name. They must agree, or a session enabled by name hears nothing.
public class EtwProviderGuidTests
{
    [Fact]
    public void Driver_provider_guid_is_the_EventSource_name_hash()
    {
        string header = File.ReadAllText(Path.Combine(NativeLibraryFixture.DriverDirectory, "core", "trace_meta.h"));
        string name = Regex.Match(header, "#define SQ_TLG_PROVIDER_NAME \"([^\"]+)\"").Groups[1].Value;
        string text = Regex.Match(header, "#define SQ_TLG_PROVIDER_GUID_TEXT \"([0-9a-f-]+)\"").Groups[1].Value;
        Assert.Equal("SieveQ-Firewall", name);

        Assert.Equal(EventSource.GetGuid(typeof(SieveQFirewallSource)), Guid.Parse(text));
        using var source = new EventSource(name);
        Assert.Equal(source.Guid, Guid.Parse(text));
    }

    [EventSource(Name = "SieveQ-Firewall")]
    private sealed class SieveQFirewallSource : EventSource
    {
    }
}
