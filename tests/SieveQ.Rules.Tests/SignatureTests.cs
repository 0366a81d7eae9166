using System.Text;
using SieveQ.Rules.Document;
using SieveQ.Rules.Signing;

namespace SieveQ.Rules.Tests;

public sealed class SignatureTests
{
    private const string Document = """
        {
          "schema": "sieveq-ruleset/v1",
          "version": 7,
          "receivers": [{ "id": 100 }],
          "rules": [{ "name": "all-to-100", "action": "allow", "from": "any", "to": { "receivers": [100] }, "maxBytes": 512 }]
        }
        """;

    private static (byte[] Json, byte[] Sig) Signed(string json, System.Security.Cryptography.ECDsa key)
    {
        var bytes = Encoding.UTF8.GetBytes(json);
        var doc = RuleSetParser.Parse(bytes);
        return (bytes, RuleSetSigner.Sign(doc.CanonicalBytes, key).ToJson());
    }

    [Fact]
    public void A_signed_rule_set_loads_with_the_pinned_key()
    {
        using var admin = T.NewKey();
        var (json, sig) = Signed(Document, admin);
        var loaded = RuleSetLoader.Load(json, sig, SignerKey.Of(admin));
        Assert.True(loaded.Signature.Pinned);
        Assert.Equal(7, loaded.Compiled.Version);
    }

    [Fact]
    public void Reformatting_keeps_the_signature_valid_because_the_canonical_form_is_signed()
    {
        using var admin = T.NewKey();
        var (_, sig) = Signed(Document, admin);
        var reformatted = Encoding.UTF8.GetBytes("""{"version":7,"rules":[{"maxBytes":512.0,"to":{"receivers":[100]},"from":"any","action":"allow","name":"all-to-100"}],"receivers":[{"id":100}],"schema":"sieveq-ruleset/v1"}""");
        Assert.Equal(7, RuleSetLoader.Load(reformatted, sig, SignerKey.Of(admin)).Compiled.Version);
    }

    [Theory]
    [InlineData("\"maxBytes\": 512", "\"maxBytes\": 513")]
    [InlineData("\"version\": 7", "\"version\": 8")]
    [InlineData("\"to\": { \"receivers\": [100] }", "\"to\": \"any\"")]
    public void A_tampered_document_is_refused(string from, string to)
    {
        using var admin = T.NewKey();
        var (_, sig) = Signed(Document, admin);
        var tampered = Encoding.UTF8.GetBytes(Document.Replace(from, to, StringComparison.Ordinal));
        var e = Assert.Throws<RuleSetException>(() => RuleSetLoader.Load(tampered, sig, SignerKey.Of(admin)));
        Assert.Equal(RuleSetErrorKind.Signature, e.Kind);
        Assert.Contains("does not match", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_tampered_signature_is_refused()
    {
        using var admin = T.NewKey();
        var (json, sig) = Signed(Document, admin);
        var sidecar = SignatureSidecar.Parse(sig);
        sidecar.Signature[10] ^= 1;
        var e = Assert.Throws<RuleSetException>(() => RuleSetLoader.Load(json, sidecar.ToJson(), SignerKey.Of(admin)));
        Assert.Equal(RuleSetErrorKind.Signature, e.Kind);
    }

    [Fact]
    public void A_document_signed_by_another_key_is_refused_even_if_the_signature_is_valid()
    {
        using var admin = T.NewKey();
        using var intruder = T.NewKey();
        var (json, sig) = Signed(Document, intruder);
        var e = Assert.Throws<RuleSetException>(() => RuleSetLoader.Load(json, sig, SignerKey.Of(admin)));
        Assert.Contains("not by the pinned administrator key", e.Message, StringComparison.Ordinal);
        // Without a pinned key the signature is checked for integrity only, and the result says so.
        Assert.False(RuleSetLoader.Load(json, sig, null).Signature.Pinned);
    }

    [Fact]
    public void A_sidecar_may_name_the_signer_by_key_id()
    {
        using var admin = T.NewKey();
        var (json, sig) = Signed(Document, admin);
        var byId = SignatureSidecar.Parse(sig) with { Signer = SignerKey.Of(admin).KeyId };
        Assert.True(RuleSetLoader.Load(json, byId.ToJson(), SignerKey.Of(admin)).Signature.Pinned);
        var e = Assert.Throws<RuleSetException>(() => RuleSetLoader.Load(json, byId.ToJson(), null));
        Assert.Contains("names key", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("")]
    [InlineData("{}")]
    [InlineData("""{"signer":"x","signature":"AAAA"}""")]
    [InlineData("""{"signer":"x","signature":"not base64!"}""")]
    [InlineData("""{"signer":"x","signature":"AAAA","extra":"1"}""")]
    [InlineData("[1]")]
    public void Malformed_signature_files_are_refused(string sidecar)
    {
        using var admin = T.NewKey();
        var e = Assert.Throws<RuleSetException>(() => RuleSetLoader.Load(Encoding.UTF8.GetBytes(Document), Encoding.UTF8.GetBytes(sidecar), SignerKey.Of(admin)));
        Assert.Equal(RuleSetErrorKind.Signature, e.Kind);
    }

    [Fact]
    public void An_unsigned_file_is_refused()
    {
        var dir = Directory.CreateTempSubdirectory("sieveq-rules-");
        try
        {
            var path = Path.Combine(dir.FullName, "r.json");
            File.WriteAllText(path, Document);
            var e = Assert.Throws<RuleSetException>(() => RuleSetLoader.LoadFile(path, null));
            Assert.Contains("unsigned", e.Message, StringComparison.Ordinal);
        }
        finally
        {
            dir.Delete(true);
        }
    }

    [Fact]
    public void The_signature_is_checked_before_the_schema()
    {
        using var admin = T.NewKey();
        var bad = Encoding.UTF8.GetBytes("""{"schema":"sieveq-ruleset/v1","version":"x","rules":[]}""");
        var (_, sig) = Signed(Document, admin);
        Assert.Equal(RuleSetErrorKind.Signature, Assert.Throws<RuleSetException>(() => RuleSetLoader.Load(bad, sig, SignerKey.Of(admin))).Kind);
    }

    [Fact]
    public void Signer_keys_must_be_p256()
    {
        using var p384 = System.Security.Cryptography.ECDsa.Create(System.Security.Cryptography.ECCurve.NamedCurves.nistP384);
        Assert.ThrowsAny<System.Security.Cryptography.CryptographicException>(() => SignerKey.FromSpki(p384.ExportSubjectPublicKeyInfo()));
    }
}
