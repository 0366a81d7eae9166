using System.CommandLine;
using System.Security.Cryptography;
using SieveQ.Cli.Commands;
using SieveQ.Deployment;
using SieveQ.Rules;
using SieveQ.Rules.Document;
using SieveQ.Rules.Signing;

namespace SieveQ.Cli.Tests;

/// <summary>Console output is process-wide: the tests that capture it never run in parallel.</summary>
[CollectionDefinition(nameof(ConsoleCapture), DisableParallelization = true)]
public sealed class ConsoleCapture
{
    public static async Task<(int Exit, string Out, string Err)> RunAsync(params string[] args)
    {
        var (stdout, stderr) = (Console.Out, Console.Error);
        using var o = new StringWriter();
        using var e = new StringWriter();
        Console.SetOut(o);
        Console.SetError(e);
        try
        {
            var root = new RootCommand { RulesCommands.Build() };
            var exit = await root.Parse(args).InvokeAsync();
            return (exit, o.ToString(), e.ToString());
        }
        finally
        {
            Console.SetOut(stdout);
            Console.SetError(stderr);
        }
    }
}

/// <summary>`sieveq rules check` (and the refusals of `rules push` that need no running deployment) on good and bad files.</summary>
[Collection(nameof(ConsoleCapture))]
public sealed class RulesCheckTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("sieveq-cli-rules-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    internal static string Samples(string file)
    {
        for (var d = new DirectoryInfo(AppContext.BaseDirectory); d is not null; d = d.Parent)
        {
            if (File.Exists(Path.Combine(d.FullName, "SieveQ.sln")))
            {
                return Path.Combine(d.FullName, "service", "SieveQ.Rules", "samples", file);
            }
        }
        throw new InvalidOperationException("repository root not found");
    }

    private static readonly string PublicKey = Samples("sample-admin.pub.pem");

    /// <summary>A copy of a sample and its signature, with <paramref name="change"/> applied to the document text.</summary>
    private string Copy(string sample, Func<string, string>? change = null, bool withSignature = true)
    {
        var path = Path.Combine(_dir, Guid.NewGuid().ToString("N") + ".json");
        var text = File.ReadAllText(Samples(sample));
        File.WriteAllText(path, change?.Invoke(text) ?? text);
        if (withSignature)
        {
            File.Copy(Samples(sample) + ".sig", path + ".sig");
        }
        return path;
    }

    [Theory]
    [InlineData("scada.json")]
    [InlineData("patterns-1000.json")]
    public async Task A_signed_sample_passes_with_the_pinned_key(string sample)
    {
        var (exit, stdout, _) = await ConsoleCapture.RunAsync("rules", "check", Samples(sample), "--signer", PublicKey);
        Assert.Equal(0, exit);
        Assert.Contains("signature: valid, pinned administrator key sha256:", stdout, StringComparison.Ordinal);
        Assert.EndsWith("OK", stdout.TrimEnd(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Without_a_signer_the_check_says_the_key_is_not_pinned()
    {
        var (exit, stdout, _) = await ConsoleCapture.RunAsync("rules", "check", Samples("scada.json"));
        Assert.Equal(0, exit);
        Assert.Contains("NOT pinned", stdout, StringComparison.Ordinal);
    }

    public static TheoryData<string, string> BadFiles => new()
    {
        { "tampered", "the signature does not match the document's canonical form" },
        { "unsigned", "unsigned:" },
        { "malformed", "not valid JSON" },
        { "schema", "/rules/" },
        { "other-signer", "not by the pinned administrator key" },
    };

    [Theory]
    [MemberData(nameof(BadFiles))]
    public async Task A_bad_file_is_rejected_with_the_reason(string which, string reason)
    {
        var path = which switch
        {
            "tampered" => Copy("patterns-1000.json", t => t.Replace("\"8a2lTL\"", "\"8a2lTM\"", StringComparison.Ordinal)),
            "unsigned" => Copy("scada.json", withSignature: false),
            "malformed" => Copy("scada.json", t => t[..^20]),
            "schema" => SignedBySampleKey(Copy("scada.json", t => ReplaceOnce(t, "\"action\": \"allow\"", "\"action\": \"maybe\""), withSignature: false)),
            _ => SignedByAnotherKey(),
        };
        var (exit, stdout, stderr) = await ConsoleCapture.RunAsync("rules", "check", path, "--signer", PublicKey);
        Assert.Equal(1, exit);
        Assert.StartsWith("REJECTED", stderr, StringComparison.Ordinal);
        Assert.Contains(reason, stderr, StringComparison.Ordinal);
        Assert.DoesNotContain("OK", stdout, StringComparison.Ordinal);
    }

    private static string ReplaceOnce(string text, string what, string with)
    {
        var at = text.IndexOf(what, StringComparison.Ordinal);
        Assert.True(at >= 0, $"{what} not in the sample");
        return text[..at] + with + text[(at + what.Length)..];
    }

    /// <summary>Signed with the shipped sample administrator key, so the check gets past the signature to the schema.</summary>
    private static string SignedBySampleKey(string path)
    {
        using var key = ECDsa.Create();
        key.ImportFromPem(File.ReadAllText(Samples("sample-admin.key.pem")));
        using var doc = RuleSetParser.ReadJson(File.ReadAllBytes(path));
        File.WriteAllBytes(path + SignatureSidecar.Extension, RuleSetSigner.Sign(RuleSetParser.Canonicalize(doc.RootElement), key).ToJson());
        return path;
    }

    private string SignedByAnotherKey()
    {
        var path = Copy("scada.json", withSignature: false);
        using var other = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var canonical = RuleSetLoader.CompileUnsigned(File.ReadAllBytes(path)).Document.CanonicalBytes;
        File.WriteAllBytes(path + SignatureSidecar.Extension, RuleSetSigner.Sign(canonical, other).ToJson());
        return path;
    }

    [Fact]
    public async Task Push_to_a_deployment_without_rules_is_refused_before_anything_is_sent()
    {
        var deployment = Path.Combine(_dir, "deployment");
        DeploymentBootstrap.Create(deployment, new LocalDeploymentSpec { BasePort = PortPlan.FindFreeBase(4, 2), Durability = false });
        var (exit, _, stderr) = await ConsoleCapture.RunAsync("rules", "push", Samples("scada.json"), "--deployment", deployment, "--key", Samples("sample-admin.key.pem"));
        Assert.Equal(1, exit);
        Assert.Contains("this deployment runs fixed routes", stderr, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Push_with_a_key_other_than_the_pinned_administrator_key_is_refused()
    {
        var deployment = Path.Combine(_dir, "with-rules");
        var cfg = DeploymentBootstrap.Create(deployment, new LocalDeploymentSpec
        {
            BasePort = PortPlan.FindFreeBase(4, 2),
            Durability = false,
            RuleSet = File.ReadAllBytes(Samples("patterns-1000.json")),
        });
        Assert.NotNull(cfg.Rules);
        var state = new RulesState(1, 0, 0);
        using var wrong = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var e = Assert.Throws<RuleSetPublishException>(() => RuleSetPublisher.BuildPush(Samples("scada.json"), wrong, cfg, state));
        Assert.Contains("is not the deployment's administrator key", e.Message, StringComparison.Ordinal);
    }
}
