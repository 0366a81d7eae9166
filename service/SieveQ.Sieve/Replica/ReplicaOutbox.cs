using SieveQ.Bft.Core;
using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Replica;

/// <summary>Approved messages for one receiver from one execution, numbered by the agreed batch number.</summary>
public sealed record OutboxBatch(int Receiver, long BatchNo, IReadOnlyList<QueuedItem> Items);

/// <summary>An ACKRES to send to <see cref="Sender"/> through pre-SQ <see cref="ViaPreSq"/>; replica id and MAC are added when rendered.</summary>
public sealed record OutboxAckResponse(int Sender, int ViaPreSq, int LossPpm, long DeliveredUpTo, int AssignedPreSq, long Nonce)
{
    /// <summary>The lowest number whose verdict the answer tells.</summary>
    public long VerdictsFrom { get; init; } = 1;

    /// <summary>The sender's rejected messages from <see cref="VerdictsFrom"/> to <see cref="DeliveredUpTo"/>.</summary>
    public IReadOnlyList<MessageRejection> Rejections { get; init; } = [];
}

public enum ControllerAction
{
    /// <summary>The pre-SQ is quarantined: ask the controller to destroy and replace it.</summary>
    RemovePreSq,

    /// <summary>Every pre-SQ warned of overload: ask the controller for one more.</summary>
    AddPreSq,

    /// <summary>A sender crossed the quarantine threshold: warn the administrator.</summary>
    SenderQuarantined,
}

/// <summary>A request for the controller, which acts once f+1 replicas send the same one.</summary>
public sealed record ControllerNotice(ControllerAction Action, int Subject, long AgreedTimeMs);

/// <summary>Everything one execution hands to the host (through the ordering core), in the order it was produced.</summary>
public sealed record OutboxContents(IReadOnlyList<OutboxBatch> Batches, IReadOnlyList<OutboxAckResponse> AckResponses, IReadOnlyList<ControllerNotice> Notices)
    : IExecutionOutputs
{
    public static readonly OutboxContents Empty = new([], [], []);

    /// <summary>The sieve's outputs of one execution (<see cref="Empty"/> when it produced none).</summary>
    public static OutboxContents Of(ExecutionOutcome outcome)
    {
        ArgumentNullException.ThrowIfNull(outcome);
        return outcome.Outputs as OutboxContents ?? Empty;
    }
}

/// <summary>
/// Collects the outputs derived from agreed state during one <see cref="SieveReplicaApplication.Execute"/>,
/// which returns them; the host renders them per replica (designation, MACs). They are not part of the
/// snapshot: what matters of them (the receiver queues) is, and the host re-sends unacknowledged messages
/// from there after a restart.
/// </summary>
internal sealed class ReplicaOutbox
{
    private List<OutboxBatch> _batches = [];
    private List<OutboxAckResponse> _acks = [];
    private List<ControllerNotice> _notices = [];

    public bool IsEmpty => _batches.Count == 0 && _acks.Count == 0 && _notices.Count == 0;

    internal void Add(OutboxBatch b) => _batches.Add(b);

    internal void Add(OutboxAckResponse a) => _acks.Add(a);

    internal void Add(ControllerNotice n) => _notices.Add(n);

    public OutboxContents Drain()
    {
        var c = new OutboxContents(_batches, _acks, _notices);
        _batches = [];
        _acks = [];
        _notices = [];
        return c;
    }
}
