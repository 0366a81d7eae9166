using System.Security.Cryptography;
using System.Text;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Replica;
using SieveQ.Rules;
using SieveQ.Rules.Activation;
using SieveQ.Rules.Document;
using SieveQ.Rules.Signing;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// Rule sets for the rule-set command tests: v1 allows every route; v2 and v3 deny payloads holding
/// "EVIL" by the rule "screen". All signed by one administrator key; another key stands for an attacker.
/// </summary>
internal sealed class RuleSetWorld : IDisposable
{
    public ECDsa Admin { get; } = ECDsa.Create(ECCurve.NamedCurves.nistP256);
    public ECDsa Intruder { get; } = ECDsa.Create(ECCurve.NamedCurves.nistP256);

    public SignerKey AdminKey => SignerKey.Of(Admin);

    public static byte[] Document(int version, bool screen) => Encoding.UTF8.GetBytes(screen
        ? $$"""
          { "schema": "sieveq-ruleset/v1", "version": {{version}}, "name": "screened",
            "patternSets": [{ "name": "bad", "literals": ["EVIL"] }],
            "rules": [{ "name": "screen", "action": "allow", "from": "any", "to": "any", "rejectPatterns": ["bad"] }] }
          """
        : $$"""
          { "schema": "sieveq-ruleset/v1", "version": {{version}}, "name": "open",
            "rules": [{ "name": "open", "action": "allow", "from": "any", "to": "any" }] }
          """);

    public static CompiledRuleSet Compile(byte[] json) => RuleSetLoader.CompileUnsigned(json);

    /// <summary>Signs the canonical form without compiling, so that documents a replica must refuse can be signed too.</summary>
    public static byte[] Sidecar(byte[] json, ECDsa key)
    {
        using var doc = RuleSetParser.ReadJson(json);
        return RuleSetSigner.Sign(RuleSetParser.Canonicalize(doc.RootElement), key).ToJson();
    }

    public OrderedRuleSets NewRules() => new(Compile(Document(1, screen: false)), AdminKey);

    public byte[] Push(byte[] json, int from, int to, long nonce, ECDsa? commandKey = null, ECDsa? documentKey = null) =>
        RuleSetCommandCodec.Sign(RuleSetCommandCodec.EncodeRegion(RuleSetOp.Activate, from, to, nonce, json, Sidecar(json, documentKey ?? Admin)), commandKey ?? Admin);

    public byte[] Rollback(int from, int to, long nonce, ECDsa? key = null) =>
        RuleSetCommandCodec.Sign(RuleSetCommandCodec.EncodeRegion(RuleSetOp.Rollback, from, to, nonce, [], []), key ?? Admin);

    public void Dispose()
    {
        Admin.Dispose();
        Intruder.Dispose();
    }
}

/// <summary>Passes everything through to the engine and records each verdict with the version that gave it.</summary>
internal sealed class RecordingRules(OrderedRuleSets inner) : IApplicationRules, IRuleSetControl
{
    public OrderedRuleSets Inner { get; } = inner;

    public List<(int Version, bool Allowed, string? Reason, string Data)> Verdicts { get; } = [];

    public int ActiveVersion => Inner.ActiveVersion;

    public RuleSetStanding Standing => Inner.Standing;

    public RuleVerdict Evaluate(in RuleInput input)
    {
        var v = Inner.Evaluate(input);
        Verdicts.Add((Inner.ActiveVersion, v.Allowed, v.Reason, Encoding.Latin1.GetString(input.Data.Span)));
        return v;
    }

    public void Prepare(ReadOnlyMemory<byte> command) => Inner.Prepare(command);

    public RuleSetResult Apply(ReadOnlyMemory<byte> command, long nextEvaluation) => Inner.Apply(command, nextEvaluation);

    public byte[] SnapshotState() => Inner.SnapshotState();

    public void RestoreState(ReadOnlySpan<byte> state) => Inner.RestoreState(state);
}
