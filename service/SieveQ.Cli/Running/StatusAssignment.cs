using System.Globalization;
using SieveQ.Deployment;

namespace SieveQ.Cli.Running;

/// <summary>
/// `sieveq status`'s assignment line: the senders each pre-SQ carries as f+1 replica-SQs agree it
/// (<see cref="AgreedAssignment"/>, the rule the console's pre-SQs page uses too); the others are moving.
/// </summary>
internal static class StatusAssignment
{
    /// <summary>Senders named per pre-SQ (and moving) on one terminal line; the rest are counted.</summary>
    private const int MaxNamed = 20;

    public static string Line(IReadOnlyList<ComponentHealth> replicas, int f)
    {
        ArgumentNullException.ThrowIfNull(replicas);
        var agreed = AgreedAssignment.Tally([.. replicas.Select(r => r.Counters)], f, int.MaxValue);
        var parts = agreed.ByPreSq.Select(e => string.Create(CultureInfo.InvariantCulture, $"pre-sq-{e.Key}: {Senders(e.Value)}")).ToList();
        if (agreed.Moving.Count > 0)
        {
            parts.Add("moving: " + Senders(agreed.Moving));
        }
        return "assignment: " + (parts.Count == 0 ? "none reported" : string.Join("; ", parts));
    }

    private static string Senders(IReadOnlyList<int> ids)
    {
        var named = string.Join(", ", ids.Take(MaxNamed).Select(i => i.ToString(CultureInfo.InvariantCulture)));
        var more = ids.Count > MaxNamed ? string.Create(CultureInfo.InvariantCulture, $" and {ids.Count - MaxNamed} more") : "";
        return (ids.Count == 1 ? "sender " : "senders ") + named + more;
    }
}
