using System.Text;

namespace SieveQ.Policy.Tests;

public class JsonPolicyMirrorTests
{
    private static PolicyKey? Parse(string json, out string? error) => JsonPolicyMirror.Parse(Encoding.UTF8.GetBytes(json), out error);

    [Fact]
    public void Strings_numbers_and_objects_become_sz_dword_and_subkeys()
    {
        var key = Parse("""{"SOFTWARE\\Policies\\SieveQ": {"A": "x", "B": 4294967295, "Sub": {"1": "y"}}}""", out string? error);

        Assert.Null(error);
        Assert.Equal(PolicyValue.String("x"), key!.Values["a"]);
        Assert.Equal(PolicyValue.DWord(uint.MaxValue), key.Values["B"]);
        Assert.Equal(PolicyValue.String("y"), key.Subkey("SUB")!.Values["1"]);
    }

    [Theory]
    [InlineData("""{"SOFTWARE\\Policies\\SieveQ": {"A": true}}""", @"SOFTWARE\Policies\SieveQ\A: JSON true has no registry equivalent")]
    [InlineData("""{"SOFTWARE\\Policies\\SieveQ": {"A": null}}""", "JSON null has no registry equivalent")]
    [InlineData("""{"SOFTWARE\\Policies\\SieveQ": {"A": ["x"]}}""", "JSON array has no registry equivalent")]
    [InlineData("""{"SOFTWARE\\Policies\\SieveQ": {"A": -1}}""", "-1 is not an integer from 0 to 4294967295")]
    [InlineData("""{"SOFTWARE\\Policies\\SieveQ": {"A": 1.5}}""", "1.5 is not an integer from 0 to 4294967295")]
    [InlineData("""{"SOFTWARE\\Policies\\SieveQ": {"A": "x", "a": "y"}}""", "appears twice")]
    [InlineData("""{"SOFTWARE\\Policies\\Other": {}}""", "is not \"SOFTWARE\\\\Policies\\\\SieveQ\"")]
    [InlineData("""{}""", "has no \"SOFTWARE\\\\Policies\\\\SieveQ\" property")]
    [InlineData("""[]""", "must be a JSON object")]
    [InlineData("""{"SOFTWARE\\Policies\\SieveQ": {"A": {"B": {"C": {}}}}}""", "keys nest deeper than 3 levels")]
    [InlineData("""{"SOFTWARE\\Policies\\SieveQ": {"DriverMode": "audit"}""", "not valid JSON")]
    [InlineData("", "empty (truncated while being written?)")]
    public void What_the_registry_cannot_hold_is_refused(string json, string expected)
    {
        Assert.Null(Parse(json, out string? error));
        Assert.Contains(expected, error, StringComparison.Ordinal);
    }

    /// <summary>
    /// Found by fuzzing (tests/fuzz, target policy-mirror): bytes that are not UTF-8 inside a name or a
    /// string (a file saved as Windows-1252, say) passed the JSON reader and then threw InvalidOperationException
    /// out of Parse, which promises a null and an error.
    /// </summary>
    [Theory]
    [InlineData("{\"SOFTWARE\\\\Policies\\\\SieveQ\": {\"ApplicationWhitelist\": {\"C:\\\\M\u00fcller\\\\app.exe\": \"\"}}}")]
    [InlineData("{\"SOFTWARE\\\\Policies\\\\SieveQ\": {\"EnrolmentId\": \"h\u00f6st\"}}")]
    public void Text_that_is_not_UTF8_is_refused_with_an_error(string json)
    {
        var latin1 = Encoding.Latin1.GetBytes(json);

        Assert.Null(JsonPolicyMirror.Parse(latin1, out string? error));
        Assert.Contains("not UTF-8", error, StringComparison.Ordinal);
    }

    [Fact]
    public void A_byte_order_mark_and_comments_are_accepted()
    {
        byte[] bytes = [0xEF, 0xBB, 0xBF, .. Encoding.UTF8.GetBytes("""
            // deployed by config management
            {"SOFTWARE\\Policies\\SieveQ": {"DriverMode": "audit",}}
            """)];

        Assert.NotNull(JsonPolicyMirror.Parse(bytes, out _));
    }

    [Fact]
    public void Unknown_names_are_warnings_not_errors()
    {
        var evaluation = PolicyJson.Evaluate("""{"SOFTWARE\\Policies\\SieveQ": {"DriverMode": "audit", "FutureSetting": 1, "FutureKey": {}}}""");

        Assert.True(evaluation.IsValid);
        Assert.Equal(2, evaluation.Warnings.Length);
    }

    [Fact]
    public void A_policy_round_trips_through_the_layout_and_the_mirror()
    {
        var original = PolicyJson.Evaluate(PolicyJson.Valid()).Policy!;

        string json = JsonPolicyMirror.Write(PolicyLayout.ToKey(original));
        var again = PolicyJson.Evaluate(json);

        Assert.True(again.IsValid, string.Join("; ", again.Errors));
        Assert.Equal(PolicyLayout.ToKey(original).ComputeFingerprint(), PolicyLayout.ToKey(again.Policy!).ComputeFingerprint());
        Assert.Equal(original, again.Policy);
    }

    [Fact]
    public void The_fingerprint_ignores_order_and_case_of_names()
    {
        var a = Parse("""{"SOFTWARE\\Policies\\SieveQ": {"A": "x", "B": 1}}""", out _)!;
        var b = Parse("""{"software\\policies\\sieveq": {"b": 1, "a": "x"}}""", out _)!;
        var c = Parse("""{"SOFTWARE\\Policies\\SieveQ": {"A": "x", "B": 2}}""", out _)!;

        Assert.Equal(a.ComputeFingerprint(), b.ComputeFingerprint());
        Assert.NotEqual(a.ComputeFingerprint(), c.ComputeFingerprint());
    }
}
