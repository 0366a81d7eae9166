using System.Globalization;
using System.Text;

namespace SieveQ.Rules.Json;

/// <summary>
/// Number.prototype.toString for IEEE-754 doubles (ECMA-262, 7.1.12.1), which RFC 8785 mandates for
/// numbers. .NET's round-trip format already yields the shortest digit string that reads back as the
/// same double; only the layout rules (where the decimal point goes, when to switch to exponent form)
/// differ, so the digits are taken from it and laid out again.
/// </summary>
public static class EcmaScriptNumber
{
    public static string Format(double value)
    {
        if (!double.IsFinite(value))
        {
            throw new FormatException("NaN and infinities have no JSON form");
        }
        if (value == 0)
        {
            return "0"; // also for -0
        }
        var (digits, n) = ShortestDigits(Math.Abs(value));
        var k = digits.Length;
        var sb = new StringBuilder(32);
        if (value < 0)
        {
            sb.Append('-');
        }
        if (k <= n && n <= 21)
        {
            sb.Append(digits).Append('0', n - k);
        }
        else if (0 < n && n <= 21)
        {
            sb.Append(digits, 0, n).Append('.').Append(digits, n, k - n);
        }
        else if (-6 < n && n <= 0)
        {
            sb.Append("0.").Append('0', -n).Append(digits);
        }
        else
        {
            sb.Append(digits[0]);
            if (k > 1)
            {
                sb.Append('.').Append(digits, 1, k - 1);
            }
            var e = n - 1;
            sb.Append('e').Append(e < 0 ? '-' : '+').Append(Math.Abs(e).ToString(CultureInfo.InvariantCulture));
        }
        return sb.ToString();
    }

    /// <summary>
    /// The shortest digits d1..dk (no leading or trailing zeros) and n such that the value is
    /// 0.d1..dk x 10^n, the (s, k, n) of ECMA-262.
    /// </summary>
    private static (string Digits, int N) ShortestDigits(double positive)
    {
        var r = positive.ToString("R", CultureInfo.InvariantCulture);
        var exponent = 0;
        var e = r.IndexOfAny(['E', 'e']);
        if (e >= 0)
        {
            exponent = int.Parse(r.AsSpan(e + 1), NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture);
            r = r[..e];
        }
        var dot = r.IndexOf('.', StringComparison.Ordinal);
        var integerDigits = dot < 0 ? r.Length : dot;
        var all = dot < 0 ? r : string.Concat(r.AsSpan(0, dot), r.AsSpan(dot + 1));
        var lead = 0;
        while (lead < all.Length - 1 && all[lead] == '0')
        {
            lead++;
        }
        var end = all.Length;
        while (end > lead + 1 && all[end - 1] == '0')
        {
            end--;
        }
        return (all[lead..end], integerDigits - lead + exponent);
    }
}
