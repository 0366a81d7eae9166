using SieveQ.Sieve.Keys;

namespace SieveQ.Sdk.Internal;

/// <summary>
/// Counts the replica-SQs' answers to one enrolment lookup: an answer is believed once f+1 replicas gave it alike, so f
/// faulty replicas can neither enrol a key nor deny an enrolment. One answer per replica; a second is ignored.
/// </summary>
internal sealed class EnrolmentVote(int f)
{
    private readonly Dictionary<int, PartyStanding> _answers = [];

    public int Needed => f + 1;

    public int Answered => _answers.Count;

    /// <summary>The largest number of replicas that answered alike.</summary>
    public int MostAlike => _answers.Values.Count == 0 ? 0 : _answers.Values.Max(a => _answers.Values.Count(b => a.SameAs(b)));

    /// <summary>Takes a replica's answer; returns the believed standing once f+1 agree.</summary>
    public PartyStanding? Add(int replica, PartyStanding answer)
    {
        ArgumentNullException.ThrowIfNull(answer);
        if (!_answers.TryAdd(replica, answer))
        {
            return null;
        }
        return _answers.Values.Count(a => a.SameAs(answer)) >= Needed ? answer : null;
    }
}
