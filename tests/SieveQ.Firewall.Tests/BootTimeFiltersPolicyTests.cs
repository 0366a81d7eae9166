using SieveQ.Policy;
using SieveQ.Policy.Hosting;

namespace SieveQ.Firewall.Tests;

/// <summary>
/// The BootTimeFilters setting as the agent reads it: from the registry layout (a PolicyKey is what the registry
/// reader hands to the layout, so REG_DWORD and REG_SZ values are built here as it builds them) and from the JSON file.
/// </summary>
public sealed class BootTimeFiltersPolicyTests : IDisposable
{
    private readonly string dir = Directory.CreateTempSubdirectory("sieveq-fw-bootpolicy-").FullName;

    public void Dispose() => Directory.Delete(dir, recursive: true);

    private static PolicyKey Registry(PolicyValue? bootTimeFilters)
    {
        var values = new Dictionary<string, PolicyValue>(StringComparer.OrdinalIgnoreCase) { ["DriverMode"] = PolicyValue.String("enforce") };
        if (bootTimeFilters is { } v)
        {
            values["BootTimeFilters"] = v;
        }
        return new PolicyKey(values, new Dictionary<string, PolicyKey>());
    }

    private static (AgentPolicy Policy, List<string> Errors, List<string> Warnings) Read(PolicyKey key)
    {
        var errors = new List<string>();
        var warnings = new List<string>();
        return (PolicyLayout.Read(key, errors, warnings), errors, warnings);
    }

    private string File(string body)
    {
        string path = Path.Combine(dir, "policy.json");
        System.IO.File.WriteAllText(path, "{\"SOFTWARE\\\\Policies\\\\SieveQ\": {" + body + "}}");
        return path;
    }

    [Theory]
    [InlineData(1u, true)]
    [InlineData(0u, false)]
    public void The_registry_dword_written_by_the_template_is_read(uint value, bool expected)
    {
        var (policy, errors, warnings) = Read(Registry(PolicyValue.DWord(value)));
        Assert.Empty(errors);
        Assert.Empty(warnings); // a known name, not "not part of the layout"
        Assert.Equal(expected, policy.BootTimeFilters);
    }

    [Fact]
    public void Not_configured_is_off()
    {
        var (policy, errors, _) = Read(Registry(null));
        Assert.Empty(errors);
        Assert.False(policy.BootTimeFilters);
        Assert.False(AgentPolicy.NotConfigured.BootTimeFilters);
    }

    [Theory]
    [InlineData(2u, "BootTimeFilters: 2 is not 0 (off) or 1 (on)")]
    [InlineData(0xFFFFFFFFu, "BootTimeFilters: 4294967295 is not 0 (off) or 1 (on)")]
    public void Another_number_is_an_error(uint value, string expected)
    {
        var (_, errors, _) = Read(Registry(PolicyValue.DWord(value)));
        Assert.Equal([expected], errors);
    }

    [Fact]
    public void A_string_is_an_error_naming_the_type()
    {
        var (_, errors, _) = Read(Registry(PolicyValue.String("1")));
        Assert.Equal(["BootTimeFilters: must be a number (REG_DWORD; a JSON integer in the file mirror), found REG_SZ"], errors);
    }

    [Fact]
    public void The_file_mirror_reads_it_and_writes_it_back()
    {
        using var source = new JsonFilePolicySource(File("\"BootTimeFilters\": 1"));
        var evaluation = PolicyLoader.Evaluate(source.Read());

        Assert.True(evaluation.IsValid, string.Join("; ", evaluation.Errors));
        Assert.True(evaluation.Policy!.BootTimeFilters);
        string written = JsonPolicyMirror.Write(PolicyLayout.ToKey(evaluation.Policy));
        Assert.Contains("\"BootTimeFilters\": 1", written, StringComparison.Ordinal);
        Assert.Equal(evaluation.Policy, PolicyLayout.Read(JsonPolicyMirror.Parse(System.Text.Encoding.UTF8.GetBytes(written), out _)!, [], []));
    }

    [Theory]
    [InlineData("\"BootTimeFilters\": true", "JSON true has no registry equivalent")]
    [InlineData("\"BootTimeFilters\": \"on\"", "BootTimeFilters: must be a number")]
    [InlineData("\"BootTimeFilters\": 3", "BootTimeFilters: 3 is not 0 (off) or 1 (on)")]
    public void A_malformed_file_value_is_refused_and_the_last_good_policy_stays(string body, string expected)
    {
        string path = File("\"BootTimeFilters\": 1");
        using var source = new JsonFilePolicySource(path);
        using var monitor = new PolicyMonitor(source);
        Assert.True(monitor.Refresh().IsValid);
        Assert.True(monitor.Policy.BootTimeFilters);

        File(body);
        var evaluation = monitor.Refresh();

        Assert.False(evaluation.IsValid);
        Assert.Contains(evaluation.Errors, e => e.Contains(expected, StringComparison.Ordinal));
        Assert.True(monitor.Policy.BootTimeFilters);
        Assert.Equal(1, monitor.Current.Generation);
        Assert.NotNull(monitor.ActiveAlarm);
    }

    [Fact]
    public void Policies_differing_only_in_the_setting_are_different_policies()
    {
        // The monitor applies a read only when the policy changed: equality must see this setting.
        Assert.NotEqual(new AgentPolicy(), new AgentPolicy { BootTimeFilters = true });
        Assert.Equal(new AgentPolicy { BootTimeFilters = true }, new AgentPolicy { BootTimeFilters = true });
        Assert.Contains("boot-time filters: on", PolicyText.Describe(new AgentPolicy { BootTimeFilters = true }), StringComparison.Ordinal);
    }
}
