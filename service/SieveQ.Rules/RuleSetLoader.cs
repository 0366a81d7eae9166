using SieveQ.Rules.Document;
using SieveQ.Rules.Signing;

namespace SieveQ.Rules;

/// <summary>A rule set that passed every check: signature, schema, references, compilation.</summary>
public sealed record LoadedRuleSet(CompiledRuleSet Compiled, SignatureCheck Signature)
{
    public RuleSetDocument Document => Compiled.Document;
}

/// <summary>
/// The whole acceptance path for a rule set, in the order that does the least work for a forged one:
/// JSON syntax and size, canonical form, signature, schema, references, compilation. Any failure
/// refuses the document as a whole with a <see cref="RuleSetException"/>; whatever ran before stays.
/// </summary>
public static class RuleSetLoader
{
    public static LoadedRuleSet Load(ReadOnlyMemory<byte> json, ReadOnlySpan<byte> sidecar, SignerKey? pinned, CompileOptions? options = null)
    {
        using var doc = RuleSetParser.ReadJson(json);
        var canonical = RuleSetParser.Canonicalize(doc.RootElement);
        var signature = RuleSetSigner.Verify(canonical, SignatureSidecar.Parse(sidecar), pinned);
        RuleSetParser.CheckSchema(doc.RootElement);
        var document = RuleSetParser.Bind(doc.RootElement, canonical);
        return new LoadedRuleSet(RuleSetCompiler.Compile(document, options), signature);
    }

    /// <summary>FILE and its sidecar FILE.sig.</summary>
    public static LoadedRuleSet LoadFile(string path, SignerKey? pinned, CompileOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(path);
        var json = ReadBounded(path, RuleSetParser.MaxDocumentBytes, RuleSetErrorKind.Limit);
        var sigPath = path + SignatureSidecar.Extension;
        if (!File.Exists(sigPath))
        {
            throw new RuleSetException(RuleSetErrorKind.Signature, "", $"unsigned: {sigPath} not found");
        }
        var sidecar = ReadBounded(sigPath, SignatureSidecar.MaxBytes, RuleSetErrorKind.Signature);
        return Load(json, sidecar, pinned, options);
    }

    /// <summary>Syntax, schema, references and compilation without a signature: for editors, tests and benchmarks.</summary>
    public static CompiledRuleSet CompileUnsigned(ReadOnlyMemory<byte> json, CompileOptions? options = null) =>
        RuleSetCompiler.Compile(RuleSetParser.Parse(json), options);

    private static byte[] ReadBounded(string path, int limit, RuleSetErrorKind kind)
    {
        try
        {
            var length = new FileInfo(path).Length;
            if (length > limit)
            {
                throw new RuleSetException(kind, "", $"{path} is {length} bytes, the limit is {limit}");
            }
            return File.ReadAllBytes(path);
        }
        catch (IOException e)
        {
            throw new RuleSetException(kind, "", $"cannot read {path}: {e.Message}", e);
        }
        catch (UnauthorizedAccessException e)
        {
            throw new RuleSetException(kind, "", $"cannot read {path}: {e.Message}", e);
        }
    }
}
