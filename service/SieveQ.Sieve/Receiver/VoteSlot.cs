using SieveQ.Bft.Protocol;

namespace SieveQ.Sieve.Receiver;

/// <summary>Algorithm 1's WaitingQuorum for one (sender, route number): one vote per replica, bodies by digest.</summary>
internal sealed class VoteSlot
{
    public readonly record struct Vote(long SenderSeq, Digest DataDigest);

    public Dictionary<int, Vote> Votes { get; } = [];

    /// <summary>Bodies whose digest was checked; at most one per replica vote, so bounded by n.</summary>
    public Dictionary<Digest, byte[]> Bodies { get; } = [];

    /// <summary>Which replica's budget each body is charged to.</summary>
    public Dictionary<Digest, int> BodyFrom { get; } = [];

    public long NextFetchAtMs { get; set; } = -1;

    public int LastAsked { get; set; } = -1;

    /// <summary>The replica designated to stream this slot's body, by the batch its first vote came in (-1: not known).</summary>
    public int Designated { get; set; } = -1;

    /// <summary>A replica whose body for this slot did not hash to its own vote (-1: none): not waited for, nor asked.</summary>
    public int BodyRefusedFrom { get; set; } = -1;

    /// <summary>The value with at least <paramref name="quorum"/> votes, if any (at most one can have f+1 with at most f liars).</summary>
    public Vote? Quorum(int quorum)
    {
        Vote? best = null;
        var bestCount = 0;
        foreach (var v in Votes.Values)
        {
            var c = 0;
            foreach (var w in Votes.Values)
            {
                if (w == v)
                {
                    c++;
                }
            }
            if (c > bestCount)
            {
                best = v;
                bestCount = c;
            }
        }
        return bestCount >= quorum ? best : null;
    }

    /// <summary>Replicas that voted for <paramref name="vote"/>, ascending.</summary>
    public int[] VotersFor(Vote vote) => Votes.Where(kv => kv.Value == vote).Select(kv => kv.Key).Order().ToArray();
}
