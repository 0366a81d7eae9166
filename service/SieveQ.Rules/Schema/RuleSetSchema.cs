namespace SieveQ.Rules.Schema;

/// <summary>The published rule-set schema (schema/ruleset.schema.json), embedded at build time.</summary>
public static class RuleSetSchema
{
    private static readonly Lazy<JsonSchemaValidator> Validator = new(() => JsonSchemaValidator.Load(Bytes()));

    public static JsonSchemaValidator Instance => Validator.Value;

    public static byte[] Bytes()
    {
        using var s = typeof(RuleSetSchema).Assembly.GetManifestResourceStream("SieveQ.Rules.ruleset.schema.json")
            ?? throw new InvalidOperationException("the rule-set schema is not embedded in this build");
        using var m = new MemoryStream();
        s.CopyTo(m);
        return m.ToArray();
    }
}
