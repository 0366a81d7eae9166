using System.Text;
using SieveQ.Rules.Json;

namespace SieveQ.Rules.Tests;

/// <summary>RFC 8785 examples (sections 3.2.2, 3.2.3 and appendix B) and the I-JSON refusals.</summary>
public sealed class JsonCanonicalizerTests
{
    private static string Canon(string json) => Encoding.UTF8.GetString(JsonCanonicalizer.Canonicalize(Encoding.UTF8.GetBytes(json)));

    [Fact]
    public void Rfc8785_section_3_2_2_example()
    {
        const string input = """
            {
              "numbers": [333333333.33333329, 1E30, 4.50,
                          2e-3, 0.000000000000000000000000001],
              "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
              "literals": [null, true, false]
            }
            """;
        const string expected = """{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}""";
        Assert.Equal(expected, Canon(input));
    }

    [Fact]
    public void Rfc8785_section_3_2_2_example_as_utf8_bytes()
    {
        const string input = """{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}""";
        // The RFC's hex dump of the canonical form (section 3.2.4).
        const string hex = """
            7b 22 6c 69 74 65 72 61 6c 73 22 3a 5b 6e 75 6c 6c 2c 74 72
            75 65 2c 66 61 6c 73 65 5d 2c 22 6e 75 6d 62 65 72 73 22 3a
            5b 33 33 33 33 33 33 33 33 33 2e 33 33 33 33 33 33 33 2c 31
            65 2b 33 30 2c 34 2e 35 2c 30 2e 30 30 32 2c 31 65 2d 32 37
            5d 2c 22 73 74 72 69 6e 67 22 3a 22 e2 82 ac 24 5c 75 30 30
            30 66 5c 6e 41 27 42 5c 22 5c 5c 5c 5c 5c 22 2f 22 7d
            """;
        var expected = Convert.FromHexString(string.Concat(hex.Split([' ', '\n', '\r'], StringSplitOptions.RemoveEmptyEntries)));
        Assert.Equal(expected, JsonCanonicalizer.Canonicalize(Encoding.UTF8.GetBytes(input)));
    }

    [Fact]
    public void Rfc8785_section_3_2_3_sorting_by_utf16_code_units()
    {
        const string input = """
            {
              "\u20ac": "Euro Sign",
              "\r": "Carriage Return",
              "\ufb33": "Hebrew Letter Dalet With Dagesh",
              "1": "One",
              "\ud83d\ude00": "Emoji: Grinning Face",
              "\u0080": "Control",
              "\u00f6": "Latin Small Letter O With Diaeresis"
            }
            """;
        var expected = "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\","
            + "\"\u20ac\":\"Euro Sign\",\"\ud83d\ude00\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}";
        Assert.Equal(expected, Canon(input));
    }

    [Theory]
    [InlineData(0x0000000000000000UL, "0")]
    [InlineData(0x8000000000000000UL, "0")]
    [InlineData(0x0000000000000001UL, "5e-324")]
    [InlineData(0x8000000000000001UL, "-5e-324")]
    [InlineData(0x7fefffffffffffffUL, "1.7976931348623157e+308")]
    [InlineData(0xffefffffffffffffUL, "-1.7976931348623157e+308")]
    [InlineData(0x4340000000000000UL, "9007199254740992")]
    [InlineData(0xc340000000000000UL, "-9007199254740992")]
    [InlineData(0x4430000000000000UL, "295147905179352830000")]
    [InlineData(0x44b52d02c7e14af5UL, "9.999999999999997e+22")]
    [InlineData(0x44b52d02c7e14af6UL, "1e+23")]
    [InlineData(0x44b52d02c7e14af7UL, "1.0000000000000001e+23")]
    [InlineData(0x444b1ae4d6e2ef4eUL, "999999999999999700000")]
    [InlineData(0x444b1ae4d6e2ef4fUL, "999999999999999900000")]
    [InlineData(0x444b1ae4d6e2ef50UL, "1e+21")]
    [InlineData(0x3eb0c6f7a0b5ed8cUL, "9.999999999999997e-7")]
    [InlineData(0x3eb0c6f7a0b5ed8dUL, "0.000001")]
    [InlineData(0x41b3de4355555553UL, "333333333.3333332")]
    [InlineData(0x41b3de4355555554UL, "333333333.33333325")]
    [InlineData(0x41b3de4355555555UL, "333333333.3333333")]
    [InlineData(0x41b3de4355555556UL, "333333333.3333334")]
    [InlineData(0x41b3de4355555557UL, "333333333.33333343")]
    [InlineData(0xbecbf647612f3696UL, "-0.0000033333333333333333")]
    [InlineData(0x43143ff3c1cb0959UL, "1424953923781206.2")]
    public void Rfc8785_appendix_b_numbers(ulong bits, string expected)
    {
        var value = BitConverter.UInt64BitsToDouble(bits);
        Assert.Equal(expected, EcmaScriptNumber.Format(value));
        // And through the parser: the shortest form reads back as the same double.
        Assert.Equal(expected, Canon(EcmaScriptNumber.Format(value)));
    }

    [Theory]
    [InlineData("1", "1")]
    [InlineData("-1.0", "-1")]
    [InlineData("100", "100")]
    [InlineData("1e20", "100000000000000000000")]
    [InlineData("1e-6", "0.000001")]
    [InlineData("1e-7", "1e-7")]
    [InlineData("123456.789e3", "123456789")]
    [InlineData("-0.0", "0")]
    [InlineData("0.1", "0.1")]
    public void Number_layout_follows_ecmascript(string input, string expected) => Assert.Equal(expected, Canon(input));

    [Fact]
    public void Control_characters_use_the_short_escapes_or_lowercase_u()
    {
        Assert.Equal("\"\\b\\t\\n\\f\\r\\u0000\\u001f\u007f\u2028\"", Canon("\"\\b\\t\\n\\f\\r\\u0000\\u001F\\u007f\\u2028\""));
    }

    [Fact]
    public void Whitespace_and_member_order_do_not_change_the_canonical_form()
    {
        Assert.Equal(Canon("""{"b":[1, 2,{"y":true,"x":null}],"a":"z"}"""), Canon("""
            {
               "a" : "z",
               "b" : [ 1, 2, { "x": null, "y": true } ]
            }
            """));
    }

    [Theory]
    [InlineData("""{"a":1,"a":2}""", "duplicate")]
    [InlineData("""["\ud800"]""", "surrogate")]
    [InlineData("""{"x":1e400}""", "double range")]
    [InlineData("""{"a":1} x""", "JSON")]
    public void I_json_violations_are_refused(string json, string why)
    {
        var e = Assert.Throws<FormatException>(() => Canon(json));
        Assert.Contains(why, e.Message, StringComparison.OrdinalIgnoreCase);
    }
}
