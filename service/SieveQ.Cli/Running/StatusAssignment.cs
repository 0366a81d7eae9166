using System.Globalization;
using SieveQ.Deployment;

namespace SieveQ.Cli.Running;

/// <summary>
/// `sieveq status`'s assignment line: the senders each pre-SQ carries as the replica-SQs agreed it (their
/// <c>assigned.sender.{id}</c> health keys). A sender counts for a pre-SQ when f+1 replicas report that pre-SQ for it
/// (the console's pre-SQs page uses the same rule); otherwise it is moving.
/// </summary>
internal static class StatusAssignment
{
    private const string Prefix = "assigned.sender.";

    /// <summary>Senders named per pre-SQ (and moving) on one terminal line; the rest are counted.</summary>
    private const int MaxNamed = 20;

    public static string Line(IReadOnlyList<ComponentHealth> replicas, int f)
    {
        ArgumentNullException.ThrowIfNull(replicas);
        var senders = new SortedSet<int>();
        foreach (var key in replicas.SelectMany(r => r.Counters.Keys))
        {
            if (key.StartsWith(Prefix, StringComparison.Ordinal)
                && int.TryParse(key.AsSpan(Prefix.Length), NumberStyles.None, CultureInfo.InvariantCulture, out var id))
            {
                senders.Add(id);
            }
        }
        var byPreSq = new SortedDictionary<long, List<int>>();
        var moving = new List<int>();
        foreach (var sender in senders)
        {
            var key = Prefix + sender.ToString(CultureInfo.InvariantCulture);
            var agreed = replicas.Where(r => r.Counters.ContainsKey(key)).GroupBy(r => r.Counters[key])
                .Where(g => g.Count() >= f + 1).Select(g => g.Key).ToList();
            if (agreed.Count == 1)
            {
                if (!byPreSq.TryGetValue(agreed[0], out var list))
                {
                    byPreSq[agreed[0]] = list = [];
                }
                list.Add(sender);
            }
            else
            {
                moving.Add(sender);
            }
        }
        var parts = byPreSq.Select(e => string.Create(CultureInfo.InvariantCulture, $"pre-sq-{e.Key}: {Senders(e.Value)}")).ToList();
        if (moving.Count > 0)
        {
            parts.Add("moving: " + Senders(moving));
        }
        return "assignment: " + (parts.Count == 0 ? "none reported" : string.Join("; ", parts));
    }

    private static string Senders(List<int> ids)
    {
        var named = string.Join(", ", ids.Take(MaxNamed).Select(i => i.ToString(CultureInfo.InvariantCulture)));
        var more = ids.Count > MaxNamed ? string.Create(CultureInfo.InvariantCulture, $" and {ids.Count - MaxNamed} more") : "";
        return (ids.Count == 1 ? "sender " : "senders ") + named + more;
    }
}
