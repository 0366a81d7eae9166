using System.Globalization;

namespace SieveQ.Deployment;

/// <summary>
/// Which senders each pre-SQ carries, as the replica-SQs agree it from their <c>assigned.sender.{id}</c> health keys:
/// a sender counts for a pre-SQ when f+1 replicas report that pre-SQ for it (at least one of them correct, and a
/// correct replica tells the sender exactly that in its ACKRES); otherwise, fewer than f+1 agreeing or two pre-SQs
/// with f+1 each, it is moving. One rule for every reader (the console's pre-SQs page, `sieveq status`).
/// </summary>
/// <param name="ByPreSq">Pre-SQ → the senders f+1 replicas assign to it; pre-SQs and senders ascending.</param>
/// <param name="Moving">The senders without one agreed pre-SQ, ascending.</param>
/// <param name="NotTallied">Senders beyond the tally's bound (the highest ids): counted, not tallied.</param>
public sealed record AgreedAssignment(IReadOnlyDictionary<long, IReadOnlyList<int>> ByPreSq, IReadOnlyList<int> Moving, int NotTallied)
{
    public const string KeyPrefix = "assigned.sender.";

    /// <summary>The health key under which a replica-SQ reports a sender's pre-SQ.</summary>
    public static string KeyOf(int sender) => KeyPrefix + sender.ToString(CultureInfo.InvariantCulture);

    /// <summary>
    /// Tallies the replicas' counters (one dictionary a replica that answered), tallying at most
    /// <paramref name="maxSenders"/> senders, the lowest ids. Keys other than <c>assigned.sender.{id}</c>, and ids that
    /// are not a plain non-negative number, are ignored.
    /// </summary>
    public static AgreedAssignment Tally(IReadOnlyList<IReadOnlyDictionary<string, long>> replicas, int f, int maxSenders)
    {
        ArgumentNullException.ThrowIfNull(replicas);
        ArgumentOutOfRangeException.ThrowIfNegative(f);
        ArgumentOutOfRangeException.ThrowIfNegative(maxSenders);
        var senders = new SortedSet<int>();
        foreach (var key in replicas.SelectMany(r => r.Keys))
        {
            if (SenderOf(key) is { } sender)
            {
                senders.Add(sender);
            }
        }
        var tallied = senders.Take(maxSenders).ToList();
        var byPreSq = new SortedDictionary<long, List<int>>();
        var moving = new List<int>();
        foreach (var sender in tallied)
        {
            var key = KeyOf(sender);
            var agreed = replicas.Select(r => r.TryGetValue(key, out var preSq) ? preSq : (long?)null).OfType<long>()
                .GroupBy(preSq => preSq).Where(g => g.Count() >= f + 1).Select(g => g.Key).ToList();
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
        var ascending = new SortedDictionary<long, IReadOnlyList<int>>(byPreSq.ToDictionary(e => e.Key, e => (IReadOnlyList<int>)e.Value));
        return new AgreedAssignment(ascending, moving, senders.Count - tallied.Count);
    }

    /// <summary>The sender id of an <c>assigned.sender.{id}</c> key; null for any other key or a malformed id.</summary>
    private static int? SenderOf(string key) =>
        key.StartsWith(KeyPrefix, StringComparison.Ordinal)
        && int.TryParse(key.AsSpan(KeyPrefix.Length), NumberStyles.None, CultureInfo.InvariantCulture, out var id)
            ? id : null;
}
