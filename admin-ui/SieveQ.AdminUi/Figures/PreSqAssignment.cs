using SieveQ.Deployment;
using SieveQ.Protocol.V1;

namespace SieveQ.AdminUi.Figures;

/// <summary>One replica's view of where a moving sender goes (null: that replica reports no assignment for it).</summary>
public sealed record AssignmentView(string Replica, long? PreSq);

/// <summary>A sender the replicas do not (yet) agree on: fewer than f+1 report the same pre-SQ, or two pre-SQs each have f+1.</summary>
public sealed record MovingSender(int Sender, IReadOnlyList<AssignmentView> Views);

/// <summary>
/// Which senders each pre-SQ carries, as f+1 replicas agree it (<see cref="AgreedAssignment"/>, the rule `sieveq status`
/// uses too), and for each moving sender every replica's view. Bounded: at most <see cref="MaxSenders"/> senders are
/// considered (the lowest ids), the rest only counted.
/// </summary>
public sealed record PreSqAssignment(IReadOnlyDictionary<long, IReadOnlyList<int>> ByPreSq, IReadOnlyList<MovingSender> Moving, int NotShown)
{
    /// <summary>Senders looked at per poll: far beyond a deployment's enrolment, and a cap on what a replica's report can make the console hold.</summary>
    public const int MaxSenders = 10_000;

    public static readonly PreSqAssignment None = new(new Dictionary<long, IReadOnlyList<int>>(), [], 0);

    /// <summary>The senders f+1 replicas assign to the pre-SQ, ascending.</summary>
    public IReadOnlyList<int> SendersOf(long preSq) => ByPreSq.GetValueOrDefault(preSq) ?? [];

    public static PreSqAssignment From(IEnumerable<ComponentStatus> components, int f)
    {
        ArgumentNullException.ThrowIfNull(components);
        var replicas = components.Where(c => c.Component == "replica-sq" && c.Reachable).OrderBy(c => c.Name, StringComparer.Ordinal).ToList();
        var agreed = AgreedAssignment.Tally([.. replicas.Select(r => (IReadOnlyDictionary<string, long>)r.Counters)], f, MaxSenders);
        var moving = agreed.Moving.Select(sender =>
        {
            var key = AgreedAssignment.KeyOf(sender);
            return new MovingSender(sender, [.. replicas.Select(r => new AssignmentView(r.Name, r.Counters.TryGetValue(key, out var p) ? p : null))]);
        }).ToList();
        return new PreSqAssignment(agreed.ByPreSq, moving, agreed.NotTallied);
    }
}
