using System.Security.Cryptography;
using System.Text;
using SieveQ.Sieve.Replica;
using SieveQ.Rules;
using SieveQ.Rules.Evaluation;

namespace SieveQ.Rules.Tests;

internal static class Repo
{
    public static string Root { get; } = FindRoot();

    public static string Rules(params string[] parts) => Path.Combine([Root, "service", "SieveQ.Rules", .. parts]);

    public static byte[] Read(params string[] parts) => File.ReadAllBytes(Rules(parts));

    private static string FindRoot()
    {
        for (var d = new DirectoryInfo(AppContext.BaseDirectory); d is not null; d = d.Parent)
        {
            if (File.Exists(Path.Combine(d.FullName, "SieveQ.sln")))
            {
                return d.FullName;
            }
        }
        throw new InvalidOperationException("repository root not found above " + AppContext.BaseDirectory);
    }
}

internal static class T
{
    /// <summary>Agreed time in Unix milliseconds from an ISO 8601 UTC text.</summary>
    public static long At(string iso) => DateTimeOffset.Parse(iso, System.Globalization.CultureInfo.InvariantCulture).ToUnixTimeMilliseconds();

    public static CompiledRuleSet Compile(string json, CompileOptions? options = null) => RuleSetLoader.CompileUnsigned(Encoding.UTF8.GetBytes(json), options);

    public static RuleSetException Refused(string json) => Assert.Throws<RuleSetException>(() => Compile(json));

    public static RuleInput In(long time, int sender, int receiver, byte[] data, long seq = 1) => new(time, sender, seq, receiver, data);

    public static RuleInput In(long time, int sender, int receiver, string text, long seq = 1) => new(time, sender, seq, receiver, Encoding.UTF8.GetBytes(text));

    public static RuleDecision Decide(this RuleEvaluator e, long time, int sender, int receiver, string text) => e.Decide(In(time, sender, receiver, text));

    public static RuleDecision Decide(this RuleEvaluator e, long time, int sender, int receiver, byte[] data) => e.Decide(In(time, sender, receiver, data));

    public static byte[] Hex(string hex) => Convert.FromHexString(hex.Replace(" ", "", StringComparison.Ordinal));

    public static ECDsa NewKey() => ECDsa.Create(ECCurve.NamedCurves.nistP256);

    public static void Allowed(RuleDecision d, string rule)
    {
        Assert.True(d.Allowed, $"expected allow by {rule}, got {d}");
        Assert.Equal(rule, d.Rule);
    }

    public static void Denied(RuleDecision d, string rule, string? detailContains = null)
    {
        Assert.False(d.Allowed, $"expected deny by {rule}, got {d}");
        Assert.Equal(rule, d.Rule);
        if (detailContains is not null)
        {
            Assert.Contains(detailContains, d.Detail ?? "", StringComparison.Ordinal);
        }
    }

    /// <summary>A minimal valid document around the given members (JSON fragments without the outer braces).</summary>
    public static string Doc(string members, int version = 1) => $$"""
        {
          "schema": "sieveq-ruleset/v1",
          "version": {{version}},
          {{members}}
        }
        """;
}
