using System.Globalization;

namespace SieveQ.Deployment;

/// <summary>
/// The string form of a Windows security identifier, checked without Windows APIs (the deployment is read on
/// Linux too, where System.Security.Principal.SecurityIdentifier is not available): "S-1-", an identifier
/// authority (decimal, below 2^48, or 0x and 12 hex digits as ConvertSidToStringSid writes large ones), then 1 to
/// 15 subauthorities, each a 32-bit unsigned decimal.
/// </summary>
public static class WindowsSid
{
    /// <summary>LocalSystem: services run as it, and it may use any agent.</summary>
    public const string LocalSystem = "S-1-5-18";

    private const int MaxSubAuthorities = 15;
    private const ulong AuthorityLimit = 1UL << 48;

    /// <summary>
    /// True when <paramref name="text"/> is a SID; <paramref name="canonical"/> is then the form Windows writes
    /// (upper-case S, decimal numbers without leading zeros), so equal SIDs compare equal as strings.
    /// </summary>
    public static bool TryCanonicalize(string? text, out string canonical)
    {
        canonical = "";
        if (string.IsNullOrEmpty(text))
        {
            return false;
        }
        var parts = text.Split('-');
        if (parts.Length < 4 || parts.Length > 3 + MaxSubAuthorities || !parts[0].Equals("S", StringComparison.OrdinalIgnoreCase) || parts[1] != "1")
        {
            return false;
        }
        ulong authority;
        if (parts[2].StartsWith("0x", StringComparison.OrdinalIgnoreCase))
        {
            if (parts[2].Length != 14 || !ulong.TryParse(parts[2].AsSpan(2), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out authority))
            {
                return false;
            }
        }
        else if (!IsDigits(parts[2]) || !ulong.TryParse(parts[2], NumberStyles.None, CultureInfo.InvariantCulture, out authority))
        {
            return false;
        }
        if (authority >= AuthorityLimit)
        {
            return false;
        }
        var sub = new uint[parts.Length - 3];
        for (int i = 0; i < sub.Length; i++)
        {
            if (!IsDigits(parts[i + 3]) || !uint.TryParse(parts[i + 3], NumberStyles.None, CultureInfo.InvariantCulture, out sub[i]))
            {
                return false;
            }
        }
        // ConvertSidToStringSid: decimal below 2^32, else 0x and 12 hex digits.
        var authorityText = authority < (1UL << 32)
            ? authority.ToString(CultureInfo.InvariantCulture)
            : "0x" + authority.ToString("X12", CultureInfo.InvariantCulture);
        canonical = $"S-1-{authorityText}-{string.Join('-', sub.Select(s => s.ToString(CultureInfo.InvariantCulture)))}";
        return true;
    }

    private static bool IsDigits(string s) => s.Length is > 0 and <= 20 && s.All(char.IsAsciiDigit);
}
