using SieveQ.Rules.Document;
using SieveQ.Rules.Evaluation;
using SieveQ.Rules.Formats;

namespace SieveQ.Rules;

/// <summary>One rule with every reference resolved to an index or an object.</summary>
internal sealed class CompiledRule
{
    public required int Index { get; init; }

    public required string Name { get; init; }

    public required RuleAction Action { get; init; }

    /// <summary>Sorted sender ids the rule covers (groups expanded); null for any sender.</summary>
    public required int[]? Senders { get; init; }

    public required TimeOfDayWindow[] During { get; init; }

    public required ulong Contains { get; init; }

    public required int MaxBytes { get; init; }

    public required CompiledFormat? Format { get; init; }

    public required ulong RejectPatterns { get; init; }

    public required RateLimit[] Rates { get; init; }

    public required FlowMachine? Flow { get; init; }

    public required FlowRole FlowRole { get; init; }

    public required int? Suspicion { get; init; }

    public bool Covers(int sender) => Senders is null || Array.BinarySearch(Senders, sender) >= 0;

    public bool Active(long agreedMs)
    {
        if (During.Length == 0)
        {
            return true;
        }
        foreach (var w in During)
        {
            if (w.Contains(agreedMs))
            {
                return true;
            }
        }
        return false;
    }
}
