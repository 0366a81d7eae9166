using System.Diagnostics;
using System.Text;
using SieveQ.Rules.Samples;
using SieveQ.Rules.Signing;

namespace SieveQ.Rules.Tests;

/// <summary>The files shipped in service/SieveQ.Rules/samples are what they claim to be.</summary>
public sealed class SampleTests
{
    private static SignerKey SampleAdmin() => SignerKey.FromPem(File.ReadAllText(Repo.Rules("samples", "sample-admin.pub.pem")));

    [Fact]
    public void The_1000_pattern_sample_is_exactly_what_the_generator_writes()
    {
        Assert.Equal(SampleRuleSets.PatternRuleSet(1000), Repo.Read("samples", "patterns-1000.json"));
    }

    [Theory]
    [InlineData("patterns-1000.json", 1000)]
    [InlineData("scada.json", 12)]
    public void Shipped_samples_are_signed_by_the_sample_admin_key(string file, int literals)
    {
        var loaded = RuleSetLoader.LoadFile(Repo.Rules("samples", file), SampleAdmin());
        Assert.True(loaded.Signature.Pinned);
        Assert.Equal(literals, loaded.Compiled.Summary.Literals);
    }

    [Fact]
    public void The_sample_public_key_is_the_public_half_of_the_sample_private_key()
    {
        Assert.Equal(SampleAdmin().KeyId, SignerKey.FromPem(File.ReadAllText(Repo.Rules("samples", "sample-admin.key.pem"))).KeyId);
    }

    [Fact]
    public void The_scada_sample_messages_get_the_verdicts_they_expect()
    {
        var e = RuleSetLoader.LoadFile(Repo.Rules("samples", "scada.json"), SampleAdmin()).Compiled.CreateEvaluator();
        var n = 0;
        foreach (var line in File.ReadLines(Repo.Rules("samples", "scada-messages.jsonl")))
        {
            using var doc = System.Text.Json.JsonDocument.Parse(line);
            var o = doc.RootElement;
            var payload = o.TryGetProperty("payload_hex", out var h) ? T.Hex(h.GetString()!) : Encoding.UTF8.GetBytes(o.GetProperty("payload_text").GetString()!);
            var d = e.Decide(T.In(T.At(o.GetProperty("time").GetString()!), o.GetProperty("sender").GetInt32(), o.GetProperty("receiver").GetInt32(), payload, ++n));
            Assert.True(d.Allowed == (o.GetProperty("expect").GetString() == "allow"), $"line {n}: {d}");
            Assert.True(d.Rule == o.GetProperty("expect_rule").GetString(), $"line {n}: {d}");
        }
        Assert.Equal(20, n);
    }

    [Fact]
    public void A_pattern_rule_set_with_ten_thousand_literals_compiles_quickly()
    {
        var sw = Stopwatch.StartNew();
        var set = RuleSetLoader.CompileUnsigned(SampleRuleSets.PatternRuleSet(10_000));
        Assert.Equal(10_000, set.Summary.Literals);
        Assert.True(sw.Elapsed < TimeSpan.FromSeconds(20), $"compiling took {sw.Elapsed}");
    }
}
