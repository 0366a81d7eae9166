namespace SieveQ.Rules;

/// <summary>Which check refused a rule set; the CLI and the admin console group refusals by it.</summary>
public enum RuleSetErrorKind
{
    Syntax,
    Signature,
    Schema,
    Reference,
    Limit,
    Version,
}

/// <summary>
/// The one exception the rule-set loader, parser and compiler throw for a bad document. The whole
/// document is refused: nothing of it is half-applied. <see cref="Path"/> is a JSON Pointer (RFC 6901)
/// into the document ("" for the document as a whole).
/// </summary>
public sealed class RuleSetException : Exception
{
    public RuleSetException()
    {
        Path = "";
    }

    public RuleSetException(string message) : base(message)
    {
        Path = "";
    }

    public RuleSetException(string message, Exception inner) : base(message, inner)
    {
        Path = "";
    }

    public RuleSetException(RuleSetErrorKind kind, string path, string message, Exception? inner = null)
        : base(Describe(kind, path, message), inner)
    {
        Kind = kind;
        Path = path;
        Detail = message;
    }

    public RuleSetErrorKind Kind { get; }

    public string Path { get; }

    /// <summary>The message without the kind and path prefix.</summary>
    public string? Detail { get; }

    private static string Describe(RuleSetErrorKind kind, string path, string message)
    {
        var what = kind.ToString().ToLowerInvariant() + " error";
        return path.Length == 0 ? $"{what}: {message}" : $"{what} at {path}: {message}";
    }
}
