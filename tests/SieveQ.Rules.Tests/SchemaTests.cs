using System.Text;
using System.Text.Json;
using SieveQ.Rules.Samples;
using SieveQ.Rules.Schema;

namespace SieveQ.Rules.Tests;

/// <summary>The published schema file itself, applied to the samples and to broken documents.</summary>
public sealed class SchemaTests
{
    private static JsonSchemaValidator PublishedSchema() => JsonSchemaValidator.Load(Repo.Read("schema", "ruleset.schema.json"));

    private static IReadOnlyList<SchemaError> Validate(JsonSchemaValidator schema, string json)
    {
        using var doc = JsonDocument.Parse(json);
        return schema.Validate(doc.RootElement);
    }

    [Theory]
    [InlineData("scada.json")]
    [InlineData("patterns-1000.json")]
    public void Shipped_samples_are_valid_against_the_published_schema_file(string sample)
    {
        using var schema = PublishedSchema();
        using var doc = JsonDocument.Parse(Repo.Read("samples", sample));
        Assert.Empty(schema.Validate(doc.RootElement));
    }

    [Fact]
    public void Generated_rule_sets_are_valid_against_the_published_schema_file()
    {
        using var schema = PublishedSchema();
        foreach (var n in new[] { 1, 100, 10_000 })
        {
            using var doc = JsonDocument.Parse(SampleRuleSets.PatternRuleSet(n));
            Assert.Empty(schema.Validate(doc.RootElement));
        }
    }

    [Fact]
    public void The_embedded_schema_is_the_published_file()
    {
        Assert.Equal(Repo.Read("schema", "ruleset.schema.json"), RuleSetSchema.Bytes());
    }

    [Theory]
    [InlineData("""{"schema":"sieveq-ruleset/v1","version":0,"rules":[]}""", "/version", "minimum")]
    [InlineData("""{"schema":"sieveq-ruleset/v2","version":1,"rules":[]}""", "/schema", "const")]
    [InlineData("""{"schema":"sieveq-ruleset/v1","rules":[]}""", "", "required")]
    [InlineData("""{"schema":"sieveq-ruleset/v1","version":1,"rules":[],"extra":1}""", "/extra", "additionalProperties")]
    [InlineData("""{"schema":"sieveq-ruleset/v1","version":1,"rules":[{"name":"r","action":"allow","from":"any","to":"any","maxBytes":-1}]}""", "/rules/0/maxBytes", "minimum")]
    [InlineData("""{"schema":"sieveq-ruleset/v1","version":1,"rules":[{"name":"r","action":"deny","from":"any","to":"any","format":"f"}]}""", "/rules/0/format", "additionalProperties")]
    [InlineData("""{"schema":"sieveq-ruleset/v1","version":1,"rules":[{"name":"r","action":"allow","from":"anyone","to":"any"}]}""", "/rules/0/from", "const")]
    [InlineData("""{"schema":"sieveq-ruleset/v1","version":1,"rules":[{"name":"r","action":"allow","from":{"senders":["1"]},"to":"any"}]}""", "/rules/0/from/senders/0", "type")]
    [InlineData("""{"schema":"sieveq-ruleset/v1","version":1,"rules":[{"name":"bad name","action":"allow","from":"any","to":"any"}]}""", "/rules/0/name", "pattern")]
    [InlineData("""{"schema":"sieveq-ruleset/v1","version":1,"rules":[],"rates":[{"name":"r","window":"1 s","messages":1}]}""", "/rates/0/window", "pattern")]
    [InlineData("""{"schema":"sieveq-ruleset/v1","version":1,"rules":[],"rates":[{"name":"r","window":"1s"}]}""", "/rates/0", "required")]
    [InlineData("""{"schema":"sieveq-ruleset/v1","version":1,"rules":[],"formats":[{"name":"f","kind":"json","fields":[{"name":"a","path":"/a","type":"string","min":1}]}]}""", "/formats/0/fields/0/min", "false")]
    [InlineData("""{"schema":"sieveq-ruleset/v1","version":1,"rules":[],"formats":[{"name":"f","kind":"binary","fields":[{"name":"a","offset":0,"length":3}]}]}""", "/formats/0/fields/0/length", "enum")]
    [InlineData("""{"schema":"sieveq-ruleset/v1","version":1,"rules":[],"windows":[{"name":"w","spans":[{"from":"25:00","to":"01:00"}]}]}""", "/windows/0/spans/0/from", "pattern")]
    [InlineData("""{"schema":"sieveq-ruleset/v1","version":1,"rules":[],"senders":[{"id":1},{"id":2}],"senderGroups":[{"name":"g","senders":[1,1]}]}""", "/senderGroups/0/senders/1", "uniqueItems")]
    public void Invalid_documents_are_refused_by_the_published_schema_with_their_path(string json, string path, string keyword)
    {
        using var schema = PublishedSchema();
        var errors = Validate(schema, json);
        Assert.NotEmpty(errors);
        Assert.Equal(path, errors[0].InstancePath);
        Assert.Equal(keyword, errors[0].Keyword);
    }

    [Fact]
    public void A_schema_violation_refuses_the_document_naming_the_path()
    {
        var e = T.Refused(T.Doc("""
            "rules": [
              { "name": "ok", "action": "allow", "from": "any", "to": "any" },
              { "name": "r", "action": "allow", "from": "any", "to": "any", "maxBytes": "big" }
            ]
            """));
        Assert.Equal(RuleSetErrorKind.Schema, e.Kind);
        Assert.Equal("/rules/1/maxBytes", e.Path);
        Assert.Contains("/rules/1/maxBytes", e.Message, StringComparison.Ordinal);
        Assert.Contains("must be an integer", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_trailing_newline_does_not_slip_past_a_name_pattern()
    {
        using var schema = PublishedSchema();
        var errors = Validate(schema, """{"schema":"sieveq-ruleset/v1","version":1,"rules":[{"name":"r\n","action":"allow","from":"any","to":"any"}]}""");
        Assert.Equal("/rules/0/name", Assert.Single(errors).InstancePath);
    }

    [Fact]
    public void The_validator_refuses_schemas_with_keywords_it_does_not_implement()
    {
        var schema = """{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","patternProperties":{"^x":{"type":"string"}}}""";
        var e = Assert.Throws<FormatException>(() => JsonSchemaValidator.Load(Encoding.UTF8.GetBytes(schema)));
        Assert.Contains("patternProperties", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void The_validator_implements_the_keywords_it_claims()
    {
        const string schemaText = """
            {
              "$schema": "https://json-schema.org/draft/2020-12/schema",
              "type": "object",
              "properties": {
                "n": { "type": "integer", "minimum": 1, "maximum": 5, "multipleOf": 2 },
                "x": { "exclusiveMinimum": 0, "exclusiveMaximum": 1 },
                "s": { "type": "string", "minLength": 2, "maxLength": 3 },
                "a": { "type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": true },
                "o": { "type": "object", "minProperties": 1, "maxProperties": 1 },
                "k": { "not": { "const": 3 } },
                "e": { "enum": [1, "one"] },
                "y": { "oneOf": [{ "type": "integer" }, { "type": "number", "minimum": 0 }] }
              }
            }
            """;
        using var schema = JsonSchemaValidator.Load(Encoding.UTF8.GetBytes(schemaText));
        Assert.Empty(Validate(schema, """{"n":2,"x":0.5,"s":"ab","a":[1,"1"],"o":{"p":1},"k":2,"e":"one","y":-1}"""));
        // 1.0 is an integer and equals 1 for enum and uniqueItems.
        Assert.Empty(Validate(schema, """{"n":4.0,"e":1.0}"""));
        Assert.Equal("uniqueItems", Validate(schema, """{"a":[1,1.0]}""")[0].Keyword);
        Assert.Equal("multipleOf", Validate(schema, """{"n":3}""")[0].Keyword);
        Assert.Equal("exclusiveMaximum", Validate(schema, """{"x":1}""")[0].Keyword);
        Assert.Equal("minLength", Validate(schema, """{"s":"\ud83d\ude00"}""")[0].Keyword);
        Assert.Equal("maxItems", Validate(schema, """{"a":[1,2,3]}""")[0].Keyword);
        Assert.Equal("maxProperties", Validate(schema, """{"o":{"p":1,"q":2}}""")[0].Keyword);
        Assert.Equal("not", Validate(schema, """{"k":3}""")[0].Keyword);
        Assert.Equal("enum", Validate(schema, """{"e":2}""")[0].Keyword);
        Assert.Equal("oneOf", Validate(schema, """{"y":1}""")[0].Keyword);
    }
}
