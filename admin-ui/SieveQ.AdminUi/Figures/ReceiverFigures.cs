using SieveQ.Deployment;

namespace SieveQ.AdminUi.Figures;

/// <summary>One replica's queue for a receiver: messages and bytes waiting, or null when the replica does not report it.</summary>
public sealed record ReplicaQueue(string Replica, long? Length, long? Bytes);

/// <summary>
/// One receiver's line on the receivers page: whether the enrolment lists it, the agent that hosts it and that
/// agent's delivery counters, and each replica's queue for it (every replica keeps its own copy of the queue, so a
/// replica far from the others is worth seeing).
/// </summary>
public sealed record ReceiverFigures(int Id, string? Name, string? Agent, bool? Enrolled, long? Delivered, long? Committed, long? Uncommitted,
    long? Fetches, IReadOnlyList<ReplicaQueue> Queues)
{
    public static IReadOnlyList<ReceiverFigures> From(DeploymentConfig deployment, EnrolledReceivers enrolment, DeploymentSnapshot? latest)
    {
        ArgumentNullException.ThrowIfNull(deployment);
        ArgumentNullException.ThrowIfNull(enrolment);
        var hosted = deployment.Agents.SelectMany(a => a.Receivers.Select(r => (Receiver: r, Agent: a.Name))).ToList();
        var ids = hosted.Select(h => h.Receiver).Concat(enrolment.Names.Keys).Concat(deployment.Routes.Select(r => r.Receiver)).Distinct().Order();
        var replicas = latest?.Components.Where(c => c.Component == "replica-sq").ToList() ?? [];
        return ids.Select(id =>
        {
            var agent = hosted.FirstOrDefault(h => h.Receiver == id).Agent;
            var counters = agent is null ? null : latest?.Components.FirstOrDefault(c => c.Component == "agent" && c.Name == agent)?.Counters;
            long? Read(string name) => counters is not null && counters.TryGetValue($"receiver.{id}.{name}", out var v) ? v : null;
            var queues = replicas.Select(r => new ReplicaQueue(r.Name,
                r.Counters.TryGetValue($"queue.{id}", out var length) ? length : null,
                r.Counters.TryGetValue($"queue_bytes.{id}", out var bytes) ? bytes : null)).ToList();
            return new ReceiverFigures(id, enrolment.Names.GetValueOrDefault(id), agent, enrolment.Error is null ? enrolment.Names.ContainsKey(id) : null,
                Read("delivered"), Read("committed"), Read("uncommitted"), Read("fetches"), queues);
        }).ToList();
    }
}
