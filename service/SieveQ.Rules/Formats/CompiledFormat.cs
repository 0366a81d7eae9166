namespace SieveQ.Rules.Formats;

/// <summary>A payload format compiled once per rule-set version; checks are pure and allocation-light.</summary>
internal abstract class CompiledFormat(string name, bool hasMessageType)
{
    public string Name { get; } = name;

    /// <summary>Whether the format extracts a message type (which flow state machines read).</summary>
    public bool HasMessageType { get; } = hasMessageType;

    public abstract FormatResult Check(ReadOnlySpan<byte> payload);
}
