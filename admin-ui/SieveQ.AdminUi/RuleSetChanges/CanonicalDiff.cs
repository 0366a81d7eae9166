using System.Text.Json;
using System.Text.Json.Nodes;

namespace SieveQ.AdminUi.RuleSetChanges;

/// <summary>One line of a diff: ' ' unchanged (context), '-' only in the running version, '+' only in the upload, '~' lines skipped.</summary>
public sealed record DiffLine(char Kind, string Text);

/// <summary>
/// A line diff of two rule sets' canonical forms, each indented one member a line (the canonical member order makes
/// equal documents print equally, so only changes of meaning show). Longest common subsequence over the lines that
/// differ after the common head and tail; past <see cref="MaxCells"/> the middle is shown as removed then added.
/// </summary>
public static class CanonicalDiff
{
    public const int Context = 2;
    public const long MaxCells = 4_000_000;

    // Shown as text in the page (HTML-encoded there), so characters need no JSON escaping to be safe.
    private static readonly JsonSerializerOptions Indented = new() { WriteIndented = true, Encoder = System.Text.Encodings.Web.JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    public static string Indent(string canonical) => JsonNode.Parse(canonical)?.ToJsonString(Indented) ?? "null";

    public static IReadOnlyList<DiffLine> Lines(string running, string uploaded)
    {
        var a = Indent(running).Split('\n');
        var b = Indent(uploaded).Split('\n');
        var head = 0;
        while (head < a.Length && head < b.Length && a[head] == b[head])
        {
            head++;
        }
        var tail = 0;
        while (tail < a.Length - head && tail < b.Length - head && a[^(tail + 1)] == b[^(tail + 1)])
        {
            tail++;
        }
        var full = new List<DiffLine>();
        full.AddRange(a[..head].Select(l => new DiffLine(' ', l)));
        full.AddRange(Middle(a[head..^tail], b[head..^tail]));
        full.AddRange(a[^tail..].Select(l => new DiffLine(' ', l)));
        return WithContext(full);
    }

    private static List<DiffLine> Middle(string[] a, string[] b)
    {
        if ((long)a.Length * b.Length > MaxCells)
        {
            return [.. a.Select(l => new DiffLine('-', l)), .. b.Select(l => new DiffLine('+', l))];
        }
        var lcs = new int[a.Length + 1, b.Length + 1];
        for (var i = a.Length - 1; i >= 0; i--)
        {
            for (var j = b.Length - 1; j >= 0; j--)
            {
                lcs[i, j] = a[i] == b[j] ? lcs[i + 1, j + 1] + 1 : Math.Max(lcs[i + 1, j], lcs[i, j + 1]);
            }
        }
        var lines = new List<DiffLine>();
        int x = 0, y = 0;
        while (x < a.Length || y < b.Length)
        {
            if (x < a.Length && y < b.Length && a[x] == b[y])
            {
                lines.Add(new DiffLine(' ', a[x++]));
                y++;
            }
            else if (x < a.Length && (y == b.Length || lcs[x + 1, y] >= lcs[x, y + 1]))
            {
                // Removals first, as a reader expects "was, now".
                lines.Add(new DiffLine('-', a[x++]));
            }
            else
            {
                lines.Add(new DiffLine('+', b[y++]));
            }
        }
        return lines;
    }

    /// <summary>Changed lines with <see cref="Context"/> unchanged lines around them; longer unchanged runs become one '~' line.</summary>
    private static List<DiffLine> WithContext(List<DiffLine> full)
    {
        var keep = new bool[full.Count];
        for (var i = 0; i < full.Count; i++)
        {
            if (full[i].Kind != ' ')
            {
                for (var k = Math.Max(0, i - Context); k <= Math.Min(full.Count - 1, i + Context); k++)
                {
                    keep[k] = true;
                }
            }
        }
        var shown = new List<DiffLine>();
        var skipped = 0;
        for (var i = 0; i < full.Count; i++)
        {
            if (keep[i])
            {
                if (skipped > 0)
                {
                    shown.Add(new DiffLine('~', $"({skipped} unchanged lines)"));
                    skipped = 0;
                }
                shown.Add(full[i]);
            }
            else
            {
                skipped++;
            }
        }
        if (skipped > 0 && shown.Count > 0)
        {
            shown.Add(new DiffLine('~', $"({skipped} unchanged lines)"));
        }
        return shown;
    }
}
