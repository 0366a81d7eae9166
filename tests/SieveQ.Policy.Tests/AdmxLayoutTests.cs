using System.Xml.Linq;

namespace SieveQ.Policy.Tests;

/// <summary>The template and the agent's reader must describe the same registry values.</summary>
public class AdmxLayoutTests
{
    private static readonly XNamespace Pd = AdmxTemplateChecker.Pd;
    private static readonly XDocument Admx = XDocument.Load(RepoPaths.Admx);
    private static readonly XDocument Adml = XDocument.Load(RepoPaths.Adml);

    private static XElement Element(string id) =>
        Admx.Descendants(Pd + "elements").Elements().Single(e => (string?)e.Attribute("id") == id);

    [Fact]
    public void Every_policy_writes_under_the_SieveQ_policy_key_for_the_machine()
    {
        foreach (var policy in Admx.Descendants(Pd + "policy"))
        {
            Assert.Equal("Machine", (string?)policy.Attribute("class"));
            Assert.Equal(PolicyLayout.RootKeyPath, (string?)policy.Attribute("key"));
            foreach (var element in policy.Element(Pd + "elements")?.Elements() ?? [])
            {
                string key = (string?)element.Attribute("key") ?? PolicyLayout.RootKeyPath;
                Assert.StartsWith(PolicyLayout.RootKeyPath, key, StringComparison.Ordinal);
            }
        }
    }

    [Fact]
    public void Value_names_match_the_layout()
    {
        var onElements = Admx.Descendants(Pd + "elements").Elements().Where(e => e.Attribute("valueName") is not null && e.Attribute("key") is null);
        // an on/off policy names its value on the policy itself (enabledValue/disabledValue)
        var onPolicies = Admx.Descendants(Pd + "policy").Where(p => p.Attribute("valueName") is not null);
        var written = onElements.Concat(onPolicies)
            .Select(e => (string)e.Attribute("valueName")!)
            .Order(StringComparer.Ordinal);
        Assert.Equal(PolicyLayout.RootValueNames.Order(StringComparer.Ordinal), written);

        var listKeys = Admx.Descendants(Pd + "list")
            .Select(l => (string)l.Attribute("key")!)
            .Order(StringComparer.Ordinal);
        Assert.Equal(PolicyLayout.SubkeyNames.Select(n => $@"{PolicyLayout.RootKeyPath}\{n}").Order(StringComparer.Ordinal), listKeys);
    }

    [Fact]
    public void Whitelist_list_is_path_and_hash_pairs_and_endpoints_are_numbered()
    {
        Assert.Equal("true", (string?)Element("ApplicationWhitelistList").Attribute("explicitValue"));
        Assert.Equal("", (string?)Element("PreSqEndpointsList").Attribute("valuePrefix"));
    }

    [Fact]
    public void Boot_time_filters_are_enabled_1_and_disabled_0_as_the_reader_takes_them()
    {
        var policy = Admx.Descendants(Pd + "policy").Single(p => (string?)p.Attribute("name") == "BootTimeFilters");
        Assert.Equal(PolicyLayout.BootTimeFilters, (string?)policy.Attribute("valueName"));
        Assert.Equal("1", (string?)policy.Element(Pd + "enabledValue")!.Element(Pd + "decimal")!.Attribute("value"));
        Assert.Equal("0", (string?)policy.Element(Pd + "disabledValue")!.Element(Pd + "decimal")!.Attribute("value"));
        var read = (uint v) => PolicyLayout.Read(new PolicyKey(new Dictionary<string, PolicyValue> { [PolicyLayout.BootTimeFilters] = PolicyValue.DWord(v) },
            new Dictionary<string, PolicyKey>()), [], []).BootTimeFilters;
        Assert.True(read(1));
        Assert.False(read(0));
    }

    [Theory]
    [InlineData("DriverMode", new[] { "enforce", "audit" })]
    [InlineData("KeyStorageProvider", new[] { "tpm", "software" })]
    public void Enum_values_are_the_ones_the_reader_accepts(string id, string[] expected)
    {
        var values = Element(id).Elements(Pd + "item").Select(i => (string)i.Element(Pd + "value")!.Element(Pd + "string")!);
        Assert.Equal(expected, values);
        Assert.Equal(expected.Order(StringComparer.Ordinal),
            (id == "DriverMode" ? Enum.GetValues<DriverMode>().Select(PolicyLayout.Name) : Enum.GetValues<KeyStorageProvider>().Select(PolicyLayout.Name))
            .Order(StringComparer.Ordinal));
    }

    [Theory]
    [InlineData("DefaultMessagesPerSecond", PolicyLimits.MaxMessagesPerSecond)]
    [InlineData("DefaultMessageBurst", PolicyLimits.MaxMessageBurst)]
    [InlineData("DefaultConnectionsPerSecond", PolicyLimits.MaxConnectionsPerSecond)]
    public void Decimal_bounds_match_the_limits(string id, uint max)
    {
        Assert.Equal("1", (string?)Element(id).Attribute("minValue"));
        Assert.Equal(max.ToString(System.Globalization.CultureInfo.InvariantCulture), (string?)Element(id).Attribute("maxValue"));
    }

    [Fact]
    public void Presented_defaults_are_the_agent_defaults()
    {
        uint Default(string id) => (uint)Adml.Descendants(Pd + "decimalTextBox").Single(d => (string?)d.Attribute("refId") == id).Attribute("defaultValue")!;
        Assert.Equal(RateLimits.Default, new RateLimits(
            Default("DefaultMessagesPerSecond"), Default("DefaultMessageBurst"), Default("DefaultConnectionsPerSecond")));
    }

    [Theory]
    [InlineData("ControllerUrl", PolicyLimits.MaxUrlLength)]
    [InlineData("EnrolmentId", PolicyLimits.MaxEnrolmentIdLength)]
    [InlineData("RuleSetLocation", PolicyLimits.MaxRuleSetLocationLength)]
    [InlineData("RuleSetSigner", PolicyLimits.MaxSignerLength)]
    public void Text_lengths_match_the_limits(string id, int max)
    {
        Assert.Equal(max, (int)Element(id).Attribute("maxLength")!);
    }
}
