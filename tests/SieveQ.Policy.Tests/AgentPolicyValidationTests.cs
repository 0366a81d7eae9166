using SieveQ.Policy.Hosting;
using System.Security.Cryptography;
using System.Text.Json.Nodes;

namespace SieveQ.Policy.Tests;

public class AgentPolicyValidationTests
{
    [Fact]
    public void A_complete_policy_is_read_with_every_setting()
    {
        var evaluation = PolicyJson.Evaluate(PolicyJson.Valid());

        Assert.True(evaluation.IsValid, string.Join("; ", evaluation.Errors));
        var p = evaluation.Policy!;
        Assert.Equal(DriverMode.Audit, p.DriverMode);
        Assert.Equal<string>(["http://presq-1.example.org:7401", "http://presq-2.example.org:7401"], p.PreSqEndpoints);
        Assert.Equal(new EnrolmentSettings("https://controller.example.org", "host-17", KeyStorageProvider.Software), p.Enrolment);
        Assert.Equal(new RuleSetReference("https://rules.example.org/sieveq/rules.json", PolicyJson.Signer), p.RuleSet);
        Assert.Equal(new RateLimits(5000, 8000, 50), p.DefaultRateLimits);
        Assert.Equal<WhitelistEntry>([new WhitelistEntry(@"C:\Program Files\Example\app.exe", PolicyJson.AppHash)], p.ApplicationWhitelist);
        Assert.Empty(evaluation.Warnings);
    }

    [Fact]
    public void Policies_compare_by_content()
    {
        var doc = PolicyJson.Valid();
        Assert.Equal(PolicyJson.Evaluate(doc).Policy, PolicyJson.Evaluate(doc).Policy);

        PolicyJson.Key(doc)["PreSqEndpoints"]!["2"] = "http://presq-3.example.org:7401";
        Assert.NotEqual(PolicyJson.Evaluate(PolicyJson.Valid()).Policy, PolicyJson.Evaluate(doc).Policy);
    }

    [Fact]
    public void Nothing_configured_is_valid_and_means_the_defaults()
    {
        var evaluation = PolicyLoader.Evaluate(PolicySnapshot.NotConfigured("test"));

        Assert.True(evaluation.IsValid);
        Assert.Equal(DriverMode.Enforce, evaluation.Policy!.DriverMode);
        Assert.Equal(RateLimits.Default, evaluation.Policy.DefaultRateLimits);
        Assert.Empty(AgentPolicy.NotConfigured.Validate());
    }

    [Fact]
    public void Endpoints_keep_the_numbered_order_of_group_policy()
    {
        var doc = PolicyJson.Valid();
        PolicyJson.Key(doc)["PreSqEndpoints"] = new JsonObject { ["10"] = "http://c:1", ["2"] = "http://b:1", ["1"] = "http://a:1" };

        Assert.Equal<string>(["http://a:1", "http://b:1", "http://c:1"], PolicyJson.Evaluate(doc).Policy!.PreSqEndpoints);
    }

    public static TheoryData<string, string, string> Invalid => new()
    {
        // setting, JSON value, expected words in the error
        { "DriverMode", "\"enforcing\"", "DriverMode: 'enforcing' is not one of audit, enforce" },
        { "DriverMode", "1", "DriverMode: must be a string (REG_SZ), found REG_DWORD" },
        { "KeyStorageProvider", "\"hsm\"", "KeyStorageProvider: 'hsm' is not one of software, tpm" },
        { "ControllerUrl", "\"controller.example.org\"", "ControllerUrl: 'controller.example.org' is not an absolute http:// or https:// URL" },
        { "ControllerUrl", "\"https://user:pw@controller.example.org\"", "ControllerUrl: must not carry a user name or password" },
        { "EnrolmentId", "\"  \"", "EnrolmentId: must not be empty" },
        { "RuleSetLocation", "\"http://rules.example.org/rules.json\"", "RuleSetLocation: 'http://rules.example.org/rules.json' is neither" },
        { "RuleSetLocation", "\"rules.json\"", "RuleSetLocation: 'rules.json' is neither" },
        { "RuleSetSigner", "\"not base64!\"", "RuleSetSigner: not valid base64" },
        { "RuleSetSigner", "\"AAECAwQ=\"", "RuleSetSigner: not a DER SubjectPublicKeyInfo" },
        { "DefaultMessagesPerSecond", "0", "DefaultMessagesPerSecond: 0 is outside 1 to 1000000" },
        { "DefaultMessageBurst", "10000001", "DefaultMessageBurst: 10000001 is outside 1 to 10000000" },
        { "DefaultConnectionsPerSecond", "\"50\"", "DefaultConnectionsPerSecond: must be a number (REG_DWORD" },
        { "PreSqEndpoints", "{\"1\": \"ftp://presq\"}", "PreSqEndpoints entry 1: 'ftp://presq' is not an absolute http:// or https:// URL" },
        { "PreSqEndpoints", "{\"1\": \"http://a:1\", \"2\": \"http://A:1/\"}", "PreSqEndpoints entry 2: 'http://A:1/' is listed twice" },
        { "PreSqEndpoints", "{\"1\": 7}", @"PreSqEndpoints\1: must be a string (REG_SZ), found REG_DWORD" },
        { "ApplicationWhitelist", "{\"C:\\\\app.exe\": \"abc\"}", @"ApplicationWhitelist\C:\app.exe: 'abc' is not a SHA-256" },
        { "ApplicationWhitelist", $"{{\"app.exe\": \"{PolicyJson.AppHash}\"}}", @"ApplicationWhitelist\app.exe: the image path must be fully qualified" },
    };

    [Theory]
    [MemberData(nameof(Invalid))]
    public void An_invalid_setting_is_refused_with_a_clear_error(string name, string json, string expected)
    {
        var doc = PolicyJson.Valid();
        PolicyJson.Key(doc)[name] = JsonNode.Parse(json);

        var evaluation = PolicyJson.Evaluate(doc);

        Assert.False(evaluation.IsValid);
        Assert.Null(evaluation.Policy);
        Assert.Contains(evaluation.Errors, e => e.Contains(expected, StringComparison.Ordinal));
    }

    [Fact]
    public void Settings_that_belong_together_must_come_together()
    {
        var doc = PolicyJson.Valid();
        PolicyJson.Key(doc).Remove("RuleSetSigner");
        PolicyJson.Key(doc).Remove("EnrolmentId");

        var errors = PolicyJson.Evaluate(doc).Errors;

        Assert.Contains(errors, e => e.StartsWith("RuleSetLocation and RuleSetSigner must be set together", StringComparison.Ordinal));
        Assert.Contains(errors, e => e.StartsWith("ControllerUrl and EnrolmentId must be set together", StringComparison.Ordinal));
    }

    [Fact]
    public void Lists_longer_than_the_limits_are_refused()
    {
        var doc = PolicyJson.Valid();
        var endpoints = new JsonObject();
        for (int i = 1; i <= PolicyLimits.MaxPreSqEndpoints + 1; i++)
        {
            endpoints[i.ToString(System.Globalization.CultureInfo.InvariantCulture)] = $"http://presq-{i}.example.org:7401";
        }
        PolicyJson.Key(doc)["PreSqEndpoints"] = endpoints;

        Assert.Contains(PolicyJson.Evaluate(doc).Errors, e => e == "PreSqEndpoints: 65 entries, at most 64 are allowed");

        var policy = AgentPolicy.NotConfigured with
        {
            ApplicationWhitelist = [.. Enumerable.Range(0, PolicyLimits.MaxWhitelistEntries + 1).Select(i => new WhitelistEntry($@"C:\a{i}.exe", PolicyJson.AppHash))],
        };
        Assert.Contains(policy.Validate(), e => e == "ApplicationWhitelist: 1025 entries, at most 1024 are allowed");
    }

    [Fact]
    public void Every_problem_is_reported_at_once()
    {
        var doc = PolicyJson.Valid();
        PolicyJson.Key(doc)["ControllerUrl"] = "nope";
        PolicyJson.Key(doc)["DefaultMessageBurst"] = 0;
        PolicyJson.Key(doc)["DriverMode"] = "off";
        PolicyJson.Key(doc)["DefaultConnectionsPerSecond"] = "many";

        var errors = PolicyJson.Evaluate(doc).Errors;

        Assert.Equal(4, errors.Length);
        Assert.Single(errors, e => e.StartsWith("DriverMode:", StringComparison.Ordinal));
        Assert.Single(errors, e => e.StartsWith("DefaultConnectionsPerSecond:", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData(@"\\fileserver\sieveq\rules.json")]
    [InlineData(@"C:\ProgramData\SieveQ\rules.json")]
    [InlineData("https://rules.example.org/rules.json")]
    public void Rule_set_locations_may_be_paths_or_https(string location)
    {
        var policy = AgentPolicy.NotConfigured with { RuleSet = new RuleSetReference(location, PolicyJson.Signer) };
        Assert.Empty(policy.Validate());
    }

    /// <summary>Rule sets are verified with ECDSA P-256 only, so a policy pinning any other key would make every rule set fail later.</summary>
    [Fact]
    public void Only_an_ECDSA_P256_signer_is_accepted()
    {
        static IReadOnlyList<string> With(byte[] spki) =>
            (AgentPolicy.NotConfigured with { RuleSet = new RuleSetReference("/etc/sieveq/rules.json", Convert.ToBase64String(spki)) }).Validate();

        using var p256 = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        Assert.Empty(With(p256.ExportSubjectPublicKeyInfo()));

        using var rsa = RSA.Create(2048);
        Assert.Contains(With(rsa.ExportSubjectPublicKeyInfo()), e => e == "RuleSetSigner: RSA key; rule sets are signed with ECDSA P-256 (secp256r1) only");

        using var p384 = ECDsa.Create(ECCurve.NamedCurves.nistP384);
        Assert.Contains(With(p384.ExportSubjectPublicKeyInfo()), e => e.StartsWith("RuleSetSigner: ECDSA key on curve", StringComparison.Ordinal)
            && e.EndsWith("rule sets are signed with ECDSA P-256 (secp256r1) only", StringComparison.Ordinal));

        // Ed25519 (1.3.101.112): well-formed SubjectPublicKeyInfo, but not an algorithm rule sets are signed with.
        byte[] ed25519 = [.. Convert.FromHexString("302a300506032b6570032100"), .. new byte[32]];
        Assert.Contains(With(ed25519), e => e.StartsWith("RuleSetSigner: key algorithm", StringComparison.Ordinal));
    }

    [Fact]
    public void Trailing_bytes_after_the_signer_key_are_refused()
    {
        byte[] spki = [.. Convert.FromBase64String(PolicyJson.Signer), 0];
        var policy = AgentPolicy.NotConfigured with { RuleSet = new RuleSetReference("/etc/sieveq/rules.json", Convert.ToBase64String(spki)) };
        Assert.Contains(policy.Validate(), e => e == "RuleSetSigner: 1 bytes follow the SubjectPublicKeyInfo");
    }

    /// <summary>
    /// Found by fuzzing (tests/fuzz, target policy-mirror): a P-256 signer whose curve OID was altered threw
    /// PlatformNotSupportedException out of Validate (OpenSSL knows no such curve) instead of being an error.
    /// </summary>
    [Fact]
    public void A_signer_on_a_curve_the_platform_does_not_know_is_an_error_not_an_exception()
    {
        using var p256 = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var spki = p256.ExportSubjectPublicKeyInfo();
        // The curve OID 1.2.840.10045.3.1.7 is encoded 2a 86 48 ce 3d 03 01 07; change its last arc to 103.
        var at = spki.AsSpan().IndexOf(Convert.FromHexString("2a8648ce3d030107"));
        Assert.True(at > 0);
        spki[at + 7] = 103;
        var policy = AgentPolicy.NotConfigured with { RuleSet = new RuleSetReference("/etc/sieveq/rules.json", Convert.ToBase64String(spki)) };

        var errors = policy.Validate();

        Assert.Contains(errors, e => e.StartsWith("RuleSetSigner: ", StringComparison.Ordinal) && e.Contains("1.2.840.10045.3.1.103", StringComparison.Ordinal));
    }
}
