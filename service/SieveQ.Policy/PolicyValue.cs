using System.Globalization;

namespace SieveQ.Policy;

/// <summary>The registry value types Group Policy writes for the SieveQ template.</summary>
public enum PolicyValueKind
{
    /// <summary>REG_SZ (or REG_EXPAND_SZ, already expanded); a JSON string in the mirror.</summary>
    String,
    /// <summary>REG_DWORD; a JSON integer in the mirror.</summary>
    DWord,
    /// <summary>Anything else the registry can hold; kept only so the error can name it.</summary>
    Unsupported,
}

public readonly record struct PolicyValue
{
    private PolicyValue(PolicyValueKind kind, string? text, uint number)
    {
        Kind = kind;
        Text = text;
        Number = number;
    }

    public PolicyValueKind Kind { get; }

    /// <summary>The string for <see cref="PolicyValueKind.String"/>, the registry type's name for unsupported ones.</summary>
    public string? Text { get; }

    public uint Number { get; }

    public static PolicyValue String(string text) => new(PolicyValueKind.String, text, 0);

    public static PolicyValue DWord(uint number) => new(PolicyValueKind.DWord, null, number);

    public static PolicyValue Unsupported(string typeName) => new(PolicyValueKind.Unsupported, typeName, 0);

    public string TypeName => Kind switch
    {
        PolicyValueKind.String => "REG_SZ",
        PolicyValueKind.DWord => "REG_DWORD",
        _ => Text ?? "unknown",
    };

    public override string ToString() => Kind switch
    {
        PolicyValueKind.String => "sz:" + Text,
        PolicyValueKind.DWord => "dword:" + Number.ToString(CultureInfo.InvariantCulture),
        _ => "other:" + Text,
    };
}
