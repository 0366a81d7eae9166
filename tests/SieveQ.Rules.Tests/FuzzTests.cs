using System.Text;
using System.Text.Json.Nodes;
using SieveQ.Sieve.Envelope;
using SieveQ.Rules.Signing;

namespace SieveQ.Rules.Tests;

/// <summary>
/// Seeded mutation fuzzing. The rule-set parser may throw only <see cref="RuleSetException"/>, snapshot
/// restore only <see cref="MalformedEnvelopeException"/>, and evaluation nothing at all.
/// </summary>
public sealed class FuzzTests
{
    private const int Inputs = 20_000;

    [Fact]
    public void Rule_set_parser_throws_only_RuleSetException()
    {
        var seed = Repo.Read("samples", "scada.json");
        var rng = new Random(20_261_122);
        var root = JsonNode.Parse(seed)!;
        int refused = 0, accepted = 0;
        for (var i = 0; i < Inputs; i++)
        {
            // Half byte-level (syntax, encoding, truncation), half structural (well-formed JSON, wrong content).
            var input = i % 2 == 0 ? MutateBytes(seed, rng) : MutateStructure(root, rng);
            try
            {
                RuleSetLoader.CompileUnsigned(input);
                accepted++;
            }
            catch (RuleSetException)
            {
                refused++;
            }
        }
        Assert.True(refused > Inputs / 4, $"only {refused} refused");
        Assert.True(accepted > 100, $"only {accepted} accepted: the structural mutations are not exercising the compiler");
    }

    [Fact]
    public void Signature_file_parser_throws_only_RuleSetException()
    {
        using var key = T.NewKey();
        var seed = RuleSetSigner.Sign("{}"u8, key).ToJson();
        var rng = new Random(5);
        for (var i = 0; i < Inputs; i++)
        {
            try
            {
                _ = SignatureSidecar.Parse(MutateBytes(seed, rng));
            }
            catch (RuleSetException)
            {
            }
        }
    }

    [Fact]
    public void State_restore_throws_only_MalformedEnvelopeException()
    {
        var set = RuleSetLoader.CompileUnsigned(Repo.Read("samples", "scada.json"));
        var e = set.CreateEvaluator();
        foreach (var m in MessageStream.Generate(11, 2000))
        {
            e.Decide(m);
        }
        var seed = e.SnapshotState();
        Assert.True(seed.Length > 200);
        var rng = new Random(6);
        var malformed = 0;
        for (var i = 0; i < Inputs; i++)
        {
            var target = set.CreateEvaluator();
            try
            {
                target.RestoreState(MutateBytes(seed, rng));
            }
            catch (MalformedEnvelopeException)
            {
                malformed++;
            }
        }
        Assert.True(malformed > 1000);
    }

    [Fact]
    public void Evaluation_never_throws_on_hostile_payloads()
    {
        var e = RuleSetLoader.CompileUnsigned(Repo.Read("samples", "scada.json")).CreateEvaluator();
        var rng = new Random(8);
        var stream = MessageStream.Generate(12, 500);
        for (var i = 0; i < Inputs; i++)
        {
            var m = stream[i % stream.Count];
            var payload = MutateBytes(m.Data.Length == 0 ? [0] : m.Data.ToArray(), rng);
            _ = e.Decide(m with { Data = payload, AgreedTimeMs = m.AgreedTimeMs + i });
        }
    }

    internal static byte[] MutateBytes(byte[] seed, Random rng)
    {
        var b = seed.ToArray();
        switch (rng.Next(7))
        {
            case 0:
                for (var k = rng.Next(1, 4); k > 0; k--)
                {
                    b[rng.Next(b.Length)] ^= (byte)(1 << rng.Next(8));
                }
                return b;
            case 1:
                return b[..rng.Next(b.Length)];
            case 2:
                return [.. b, .. Enumerable.Range(0, rng.Next(1, 20)).Select(_ => (byte)rng.Next(256))];
            case 3:
                b[rng.Next(b.Length)] = (byte)rng.Next(256);
                return b;
            case 4:
            {
                var at = rng.Next(Math.Max(1, b.Length - 4));
                var extreme = new[] { 0u, 1u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu }[rng.Next(5)];
                BitConverter.TryWriteBytes(b.AsSpan(at, Math.Min(4, b.Length - at)), extreme);
                return b;
            }
            case 5:
            {
                // Duplicate a slice: repeated members, nested structures.
                var from = rng.Next(b.Length);
                var len = rng.Next(Math.Min(64, b.Length - from) + 1);
                var to = rng.Next(b.Length);
                return [.. b[..to], .. b.AsSpan(from, len).ToArray(), .. b[to..]];
            }
            default:
            {
                // Delete a slice.
                var from = rng.Next(b.Length);
                var len = rng.Next(Math.Min(32, b.Length - from) + 1);
                return [.. b[..from], .. b[(from + len)..]];
            }
        }
    }

    private static readonly JsonNode?[] Replacements =
    [
        null, true, false, 0, -1, 1, 2, 65536, int.MaxValue, long.MaxValue, 1e300, 0.5, -0.0, "", "x", "any", "allow", "deny", "*",
        "1s", "24:00", "00:00", "/a", "(a)\\1", "[", "json", "binary", "request", "response", "big", "mon", new string('a', 70),
    ];

    /// <summary>Replace, delete or duplicate one value somewhere in the document; the result is still JSON.</summary>
    private static byte[] MutateStructure(JsonNode root, Random rng)
    {
        var doc = root.DeepClone();
        var nodes = new List<JsonNode>();
        Collect(doc, nodes);
        var victim = nodes[rng.Next(1, nodes.Count)];
        var parent = victim.Parent!;
        JsonNode? replacement = rng.Next(5) switch
        {
            0 => nodes[rng.Next(nodes.Count)].DeepClone(),
            1 => new JsonArray(),
            2 => new JsonObject(),
            _ => Replacements[rng.Next(Replacements.Length)]?.DeepClone(),
        };
        switch (parent)
        {
            case JsonObject o:
                var name = victim.GetPropertyName();
                if (rng.Next(4) == 0)
                {
                    o.Remove(name);
                }
                else
                {
                    o[name] = replacement;
                }
                break;
            case JsonArray a:
                var index = victim.GetElementIndex();
                if (rng.Next(4) == 0)
                {
                    a.RemoveAt(index);
                }
                else if (rng.Next(3) == 0)
                {
                    a.Insert(index, replacement);
                }
                else
                {
                    a[index] = replacement;
                }
                break;
        }
        return Encoding.UTF8.GetBytes(doc.ToJsonString());
    }

    private static void Collect(JsonNode node, List<JsonNode> into)
    {
        into.Add(node);
        switch (node)
        {
            case JsonObject o:
                foreach (var (_, v) in o)
                {
                    if (v is not null)
                    {
                        Collect(v, into);
                    }
                }
                break;
            case JsonArray a:
                foreach (var v in a)
                {
                    if (v is not null)
                    {
                        Collect(v, into);
                    }
                }
                break;
        }
    }
}
