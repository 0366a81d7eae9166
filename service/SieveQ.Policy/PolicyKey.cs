using System.Security.Cryptography;
using System.Text;

namespace SieveQ.Policy;

/// <summary>
/// A registry key as a policy source saw it: named values and subkeys, names compared without case as the
/// registry does. Both sources produce this shape, so one interpreter (<see cref="PolicyLayout"/>) serves both.
/// </summary>
public sealed class PolicyKey
{
    public static PolicyKey Empty { get; } = new(new Dictionary<string, PolicyValue>(), new Dictionary<string, PolicyKey>());

    public PolicyKey(IDictionary<string, PolicyValue> values, IDictionary<string, PolicyKey> subkeys)
    {
        // Copied so a caller's later edits cannot reach a tree that is already being interpreted.
        Values = new Dictionary<string, PolicyValue>(values, StringComparer.OrdinalIgnoreCase);
        Subkeys = new Dictionary<string, PolicyKey>(subkeys, StringComparer.OrdinalIgnoreCase);
    }

    public IReadOnlyDictionary<string, PolicyValue> Values { get; }

    public IReadOnlyDictionary<string, PolicyKey> Subkeys { get; }

    public PolicyKey? Subkey(string name) => Subkeys.GetValueOrDefault(name);

    /// <summary>
    /// A digest of the content independent of enumeration order and name case, so that re-reading an
    /// unchanged registry key is recognised as "no change".
    /// </summary>
    public string ComputeFingerprint()
    {
        using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        Append(hash, this);
        return "sha256:" + Convert.ToHexStringLower(hash.GetHashAndReset());
    }

    private static void Append(IncrementalHash hash, PolicyKey key)
    {
        foreach (var (name, value) in key.Values.OrderBy(p => p.Key.ToUpperInvariant(), StringComparer.Ordinal))
        {
            Field(hash, "v");
            Field(hash, name.ToUpperInvariant());
            Field(hash, value.ToString());
        }
        foreach (var (name, subkey) in key.Subkeys.OrderBy(p => p.Key.ToUpperInvariant(), StringComparer.Ordinal))
        {
            Field(hash, "k");
            Field(hash, name.ToUpperInvariant());
            Append(hash, subkey);
            Field(hash, "end");
        }
    }

    // Length-prefixed so that no two different trees serialise to the same bytes.
    private static void Field(IncrementalHash hash, string text)
    {
        byte[] bytes = Encoding.UTF8.GetBytes(text);
        Span<byte> length = stackalloc byte[4];
        System.Buffers.Binary.BinaryPrimitives.WriteInt32LittleEndian(length, bytes.Length);
        hash.AppendData(length);
        hash.AppendData(bytes);
    }
}
