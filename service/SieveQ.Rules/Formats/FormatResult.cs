namespace SieveQ.Rules.Formats;

/// <summary>
/// A message's type as a format extracts it: an integer (binary fields, JSON integers) or a string
/// (JSON strings). Integers and their canonical decimal text name the same type.
/// </summary>
public readonly record struct MessageType(bool Present, long Integer, string? Text)
{
    public static readonly MessageType None = default;

    public static MessageType Of(long value) => new(true, value, null);

    public static MessageType Of(string text) => new(true, 0, text);

    public override string ToString() => !Present ? "(none)" : Text ?? Integer.ToString(System.Globalization.CultureInfo.InvariantCulture);
}

/// <summary>Whether a payload fits a format, why not, and the message type it carries.</summary>
public readonly record struct FormatResult(bool Ok, string? Problem, MessageType Type)
{
    public static FormatResult Pass(MessageType type) => new(true, null, type);

    public static FormatResult Fail(string problem) => new(false, problem, MessageType.None);
}
