namespace SieveQ.Rules.Document;

/// <summary>
/// A rule-set document as parsed and schema-checked, before references are resolved. Every element
/// keeps its JSON Pointer so the compiler can name the exact place of a wrong reference.
/// <see cref="CanonicalBytes"/> is the RFC 8785 form the signature covers and the snapshot carries.
/// </summary>
public sealed record RuleSetDocument
{
    public const string SchemaId = "sieveq-ruleset/v1";

    public required int Version { get; init; }

    public string? Name { get; init; }

    public required RuleSetLimits Limits { get; init; }

    public required IReadOnlyList<PartySpec> Senders { get; init; }

    public required IReadOnlyList<GroupSpec> SenderGroups { get; init; }

    public required IReadOnlyList<PartySpec> Receivers { get; init; }

    public required IReadOnlyList<GroupSpec> Topics { get; init; }

    public required IReadOnlyList<FormatSpec> Formats { get; init; }

    public required IReadOnlyList<PatternSetSpec> PatternSets { get; init; }

    public required IReadOnlyList<RateSpec> Rates { get; init; }

    public required IReadOnlyList<WindowSpec> Windows { get; init; }

    public required IReadOnlyList<FlowSpec> Flows { get; init; }

    public QuarantineSpec? Quarantine { get; init; }

    public required IReadOnlyList<RuleSpec> Rules { get; init; }

    public required byte[] CanonicalBytes { get; init; }

    /// <summary>SHA-256 of <see cref="CanonicalBytes"/>: the identity of this exact rule set.</summary>
    public required byte[] Digest { get; init; }
}

public sealed record RuleSetLimits(int MaxMessageBytes, int MaxSenders, int MaxFlows)
{
    public static readonly RuleSetLimits Default = new(1 << 20, 65_536, 65_536);
}

public sealed record PartySpec(string Path, int Id, string? Name);

/// <summary>A sender group or a topic: a name for a set of ids.</summary>
public sealed record GroupSpec(string Path, string Name, IReadOnlyList<int> Members);

public enum FormatKind
{
    Json,
    Binary,
}

public enum JsonFieldType
{
    String,
    Integer,
    Number,
    Boolean,
    Null,
    Object,
    Array,
}

/// <summary>Allowed numeric values: a closed interval and/or listed values and ranges (any of them).</summary>
public sealed record ValueConstraint(double? Min, double? Max, IReadOnlyList<long>? Values, IReadOnlyList<(long Low, long High)>? Ranges)
{
    public bool IsEmpty => Min is null && Max is null && Values is null && Ranges is null;
}

public sealed record JsonFieldSpec(
    string Path,
    string Name,
    string Pointer,
    JsonFieldType Type,
    bool Required,
    ValueConstraint Numbers,
    IReadOnlyList<string>? Enum,
    int? MinLength,
    int? MaxLength,
    string? Regex);

public sealed record BinaryFieldSpec(
    string Path,
    string Name,
    int Offset,
    int Length,
    bool BigEndian,
    bool Required,
    string? WhenField,
    IReadOnlyList<long>? WhenValues,
    ValueConstraint Numbers,
    int? LengthFrom);

public sealed record FormatSpec(
    string Path,
    string Name,
    FormatKind Kind,
    int? MinBytes,
    int? MaxBytes,
    int MaxDepth,
    bool DenyOtherFields,
    string? MessageType,
    IReadOnlyList<JsonFieldSpec> JsonFields,
    IReadOnlyList<BinaryFieldSpec> BinaryFields);

public sealed record PatternSetSpec(
    string Path,
    string Name,
    bool CaseInsensitive,
    IReadOnlyList<byte[]> Literals,
    IReadOnlyList<string> Regexes);

public sealed record RateSpec(string Path, string Name, long WindowMs, long? Messages, long? Bytes);

/// <summary>Minutes of the UTC day; <see cref="Days"/> is a bit mask, Monday = bit 0.</summary>
public sealed record SpanSpec(int Days, int FromMinute, int ToMinute);

public sealed record WindowSpec(string Path, string Name, IReadOnlyList<SpanSpec> Spans);

public enum FlowRole
{
    Request,
    Response,
}

public sealed record TransitionSpec(string Path, string? From, IReadOnlyList<string> On, string? To, FlowRole Role);

public sealed record FlowSpec(string Path, string Name, string Initial, IReadOnlyList<TransitionSpec> Transitions, int? MaxOutstanding, long? IdleTimeoutMs);

/// <summary>The kinds of violation, each with its own suspicion increment.</summary>
public enum ViolationKind
{
    Route,
    Size,
    Format,
    Pattern,
    Rate,
    Order,
}

public sealed record QuarantineSpec(int Threshold, int Release, int DecayPerSecond, IReadOnlyDictionary<ViolationKind, int> Increments);

public enum RuleAction
{
    Allow,
    Deny,
}

public sealed record RuleSpec(
    string Path,
    string Name,
    RuleAction Action,
    IReadOnlyList<int>? FromSenders,
    IReadOnlyList<string>? FromGroups,
    IReadOnlyList<int>? ToReceivers,
    IReadOnlyList<string>? ToTopics,
    IReadOnlyList<string>? During,
    int? MaxBytes,
    string? Format,
    IReadOnlyList<string>? RejectPatterns,
    IReadOnlyList<string>? Rates,
    string? Flow,
    FlowRole FlowRole,
    IReadOnlyList<string>? Contains,
    int? Suspicion)
{
    /// <summary>"from": "any".</summary>
    public bool AnySender => FromSenders is null && FromGroups is null;

    /// <summary>"to": "any".</summary>
    public bool AnyReceiver => ToReceivers is null && ToTopics is null;
}
