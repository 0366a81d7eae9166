namespace SieveQ.Sieve.Keys;

/// <summary>Key names become file names or CNG container names; only a safe alphabet is allowed.</summary>
public static class KeyNames
{
    public static string Check(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        if (name.Length is 0 or > 100 || !name.All(c => char.IsAsciiLetterOrDigit(c) || c is '-' or '_' or '.') || name.StartsWith('.'))
        {
            throw new KeyStoreException($"key name '{name}' must be 1-100 characters of letters, digits, '-', '_' or '.', not starting with '.'");
        }
        return name;
    }
}
