using System.Security.Cryptography;
using SieveQ.Deployment;
using SieveQ.Rules;
using SieveQ.Rules.Signing;

namespace SieveQ.Tests.Shared;

/// <summary>Small rule sets: sender 1 may reach receiver 2 unless the payload says "malware"; everything else is denied.</summary>
internal static class TestRuleSets
{
    public static string Json(int version, string name = "test-rules") => $$"""
        {
          "schema": "sieveq-ruleset/v1",
          "version": {{version}},
          "name": "{{name}}",
          "senders": [{ "id": 1 }],
          "receivers": [{ "id": 2 }],
          "patternSets": [{ "name": "markers", "literals": ["malware"] }],
          "rules": [
            { "name": "no-malware", "action": "deny", "from": "any", "to": "any", "contains": ["markers"] },
            { "name": "one-to-two", "action": "allow", "from": { "senders": [1] }, "to": { "receivers": [2] } }
          ]
        }
        """;

    public static byte[] Sidecar(string json, ECDsa key) =>
        RuleSetSigner.Sign(RuleSetLoader.CompileUnsigned(System.Text.Encoding.UTF8.GetBytes(json)).Document.CanonicalBytes, key).ToJson();
}

/// <summary>The deployment's side of a rule-set switch, in memory: the state it reports and what it was asked to order.</summary>
internal sealed class FakeRuleSetOrdering(ECDsa administrator) : IRuleSetOrdering
{
    public RulesState State { get; set; } = new(1, 0, 0);
    public string? StateFailure { get; set; }
    public List<(byte[] Json, byte[]? Sidecar, RulesState Against)> Pushes { get; } = [];
    public List<RulesState> Rollbacks { get; } = [];

    public SignerKey Administrator { get; } = SignerKey.Of(administrator);

    public Task<RulesState> ReadStateAsync(CancellationToken ct) =>
        StateFailure is { } failure ? Task.FromException<RulesState>(new RuleSetPublishException(failure)) : Task.FromResult(State);

    public Task<AdminCommandReport> PushAsync(byte[] json, byte[]? sidecar, RulesState state, CancellationToken ct)
    {
        Pushes.Add((json, sidecar, state));
        var version = RuleSetLoader.CompileUnsigned(json).Version;
        State = new RulesState(version, state.ActiveVersion, state.LastNonce + 1);
        return Task.FromResult(new AdminCommandReport(true, $"activated version {version} in place of version {state.ActiveVersion}", "pre-sq-0"));
    }

    public Task<AdminCommandReport> RollbackAsync(RulesState state, CancellationToken ct)
    {
        Rollbacks.Add(state);
        State = new RulesState(state.PreviousVersion, 0, state.LastNonce + 1);
        return Task.FromResult(new AdminCommandReport(true, $"rolled back to version {state.PreviousVersion} in place of version {state.ActiveVersion}", "pre-sq-0"));
    }
}
