using System.Text;

namespace SieveQ.Attacks.Attacks.Http2;

/// <summary>
/// Reads a server's header block, enough to tell how it answered: :status and grpc-status. The attacker's SETTINGS
/// set HEADER_TABLE_SIZE to 0, so no dynamic-table entry outlives its header field and none is looked up; a
/// Huffman-coded string (Kestrel writes none) reads as "?".
/// </summary>
internal static class HeaderBlock
{
    /// <summary>RFC 7541 appendix A, the :status entries; other static entries read as their index.</summary>
    private static readonly Dictionary<int, (string Name, string Value)> Static = new()
    {
        [8] = (":status", "200"), [9] = (":status", "204"), [10] = (":status", "206"), [11] = (":status", "304"),
        [12] = (":status", "400"), [13] = (":status", "404"), [14] = (":status", "500"), [31] = ("content-type", ""),
    };

    public static IReadOnlyList<(string Name, string Value)> Decode(ReadOnlySpan<byte> block)
    {
        var fields = new List<(string, string)>();
        var at = 0;
        while (at < block.Length)
        {
            var b = block[at];
            if ((b & 0x80) != 0)
            {
                var index = Integer(block, ref at, 7);
                fields.Add(Static.TryGetValue(index, out var e) ? e : ($"#{index}", ""));
            }
            else if ((b & 0xE0) == 0x20)
            {
                _ = Integer(block, ref at, 5);
            }
            else
            {
                var prefix = (b & 0xC0) == 0x40 ? 6 : 4;
                var index = Integer(block, ref at, prefix);
                var name = index == 0 ? String(block, ref at) : Static.TryGetValue(index, out var e) ? e.Name : $"#{index}";
                fields.Add((name, String(block, ref at)));
            }
        }
        return fields;
    }

    private static int Integer(ReadOnlySpan<byte> block, ref int at, int prefixBits)
    {
        var max = (1 << prefixBits) - 1;
        var value = block[at++] & max;
        if (value < max)
        {
            return value;
        }
        var shift = 0;
        while (true)
        {
            var b = block[at++];
            value += (b & 0x7F) << shift;
            shift += 7;
            if ((b & 0x80) == 0 || shift > 28)
            {
                return value;
            }
        }
    }

    private static string String(ReadOnlySpan<byte> block, ref int at)
    {
        var huffman = (block[at] & 0x80) != 0;
        var length = Integer(block, ref at, 7);
        var s = huffman ? "?" : Encoding.ASCII.GetString(block.Slice(at, length));
        at += length;
        return s;
    }
}
