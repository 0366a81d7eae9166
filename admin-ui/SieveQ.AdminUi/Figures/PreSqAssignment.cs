using System.Globalization;
using SieveQ.Protocol.V1;

namespace SieveQ.AdminUi.Figures;

/// <summary>One replica's view of where a moving sender goes (null: that replica reports no assignment for it).</summary>
public sealed record AssignmentView(string Replica, long? PreSq);

/// <summary>A sender the replicas do not (yet) agree on: fewer than f+1 report the same pre-SQ, or two pre-SQs each have f+1.</summary>
public sealed record MovingSender(int Sender, IReadOnlyList<AssignmentView> Views);

/// <summary>
/// Which senders each pre-SQ carries, as the replicas agreed it (their <c>assigned.sender.{id}</c> health keys): a
/// sender counts for a pre-SQ when f+1 replicas report that pre-SQ for it (at least one of them correct, and a
/// correct replica tells the sender exactly that in its ACKRES); otherwise it is moving, with each replica's view.
/// Bounded: at most <see cref="MaxSenders"/> senders are considered (the lowest ids), the rest only counted.
/// </summary>
public sealed record PreSqAssignment(IReadOnlyDictionary<long, IReadOnlyList<int>> ByPreSq, IReadOnlyList<MovingSender> Moving, int NotShown)
{
    public const string KeyPrefix = "assigned.sender.";

    /// <summary>Senders looked at per poll: far beyond a deployment's enrolment, and a cap on what a replica's report can make the console hold.</summary>
    public const int MaxSenders = 10_000;

    public static readonly PreSqAssignment None = new(new Dictionary<long, IReadOnlyList<int>>(), [], 0);

    /// <summary>The senders f+1 replicas assign to the pre-SQ, ascending.</summary>
    public IReadOnlyList<int> SendersOf(long preSq) => ByPreSq.GetValueOrDefault(preSq) ?? [];

    public static PreSqAssignment From(IEnumerable<ComponentStatus> components, int f)
    {
        ArgumentNullException.ThrowIfNull(components);
        var replicas = components.Where(c => c.Component == "replica-sq" && c.Reachable).OrderBy(c => c.Name, StringComparer.Ordinal).ToList();
        var senders = new SortedSet<int>();
        foreach (var key in replicas.SelectMany(r => r.Counters.Keys))
        {
            if (SenderOf(key) is { } sender)
            {
                senders.Add(sender);
            }
        }
        var shown = senders.Take(MaxSenders).ToList();
        var byPreSq = new SortedDictionary<long, List<int>>();
        var moving = new List<MovingSender>();
        foreach (var sender in shown)
        {
            var key = KeyPrefix + sender.ToString(CultureInfo.InvariantCulture);
            var views = replicas.Select(r => new AssignmentView(r.Name, r.Counters.TryGetValue(key, out var p) ? p : null)).ToList();
            var agreed = views.Where(v => v.PreSq is not null).GroupBy(v => v.PreSq!.Value).Where(g => g.Count() >= f + 1).Select(g => g.Key).ToList();
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
                moving.Add(new MovingSender(sender, views));
            }
        }
        return new PreSqAssignment(byPreSq.ToDictionary(e => e.Key, e => (IReadOnlyList<int>)e.Value), moving, senders.Count - shown.Count);
    }

    /// <summary>The sender id of an <c>assigned.sender.{id}</c> key; null for any other key or a malformed id.</summary>
    private static int? SenderOf(string key) =>
        key.StartsWith(KeyPrefix, StringComparison.Ordinal)
        && int.TryParse(key.AsSpan(KeyPrefix.Length), NumberStyles.None, CultureInfo.InvariantCulture, out var id)
            ? id : null;
}
