using SieveQ.ReplicaSq;
using SieveQ.Sieve.Replica;

namespace SieveQ.Attacks.Attacks;

/// <summary>
/// While <see cref="Active"/>, the replica-SQ sends receivers nothing: no frame of any agreed batch (its digest votes,
/// and its bodies where it is the designated replica or re-sends) and no answer to a body fetch (the call is held
/// until the receiver gives up). Its ordering is untouched.
/// </summary>
internal sealed class WithholdingOutputs : IReceiverOutputGate, ISwitchedStage
{
    private long _itemsWithheld;
    private long _fetchesHeld;
    private volatile bool _active;

    /// <summary>Output items withheld (each a vote, with its body where the replica would have streamed one).</summary>
    public long Applied => Interlocked.Read(ref _itemsWithheld);

    /// <summary>Body fetches left unanswered.</summary>
    public long FetchesHeld => Interlocked.Read(ref _fetchesHeld);

    public bool Active
    {
        get => _active;
        set => _active = value;
    }

    public bool Sends(OutboxBatch agreed)
    {
        if (!_active)
        {
            return true;
        }
        Interlocked.Add(ref _itemsWithheld, agreed.Items.Count);
        return false;
    }

    public bool Answers(int receiver)
    {
        if (!_active)
        {
            return true;
        }
        Interlocked.Increment(ref _fetchesHeld);
        return false;
    }
}
