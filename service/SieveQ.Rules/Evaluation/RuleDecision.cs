using SieveQ.Sieve.Replica;
using SieveQ.Rules.Document;

namespace SieveQ.Rules.Evaluation;

/// <summary>
/// The outcome for one message: allowed or not, the rule that decided (a rule's name, or one of the
/// built-in deciders <see cref="DefaultDeny"/>, <see cref="QuarantineRule"/>, <see cref="SizeLimitRule"/>),
/// the kind of violation and a sentence for the operator.
/// </summary>
public readonly record struct RuleDecision(bool Allowed, string Rule, ViolationKind? Violation, string? Detail)
{
    public const string DefaultDeny = "default-deny";

    public const string QuarantineRule = "quarantine";

    public const string SizeLimitRule = "message-size-limit";

    public static readonly IReadOnlySet<string> BuiltInRules = new HashSet<string>(StringComparer.Ordinal) { DefaultDeny, QuarantineRule, SizeLimitRule };

    /// <summary>The core's verdict; an allowed verdict carries the rule name as its reason.</summary>
    public RuleVerdict ToVerdict() => Allowed ? new RuleVerdict(true, Rule) : RuleVerdict.Deny(Detail is null ? Rule : Rule + ": " + Detail);

    public override string ToString() => (Allowed ? "allow " : "deny ") + Rule + (Detail is null ? "" : ": " + Detail);
}
