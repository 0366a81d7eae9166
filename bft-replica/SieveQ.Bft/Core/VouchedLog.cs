using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

/// <summary>The decided values state-transfer replies vouch for: an entry counts once f+1 replies name its (instance, hash).</summary>
internal sealed class VouchedLog(IReadOnlyList<Dictionary<long, LoggedDecision>> logs, int weak)
{
    /// <summary>
    /// The value for <paramref name="cid"/>: the first carried value that hashes to its own entry's hash, if f+1
    /// replies name that hash; otherwise null.
    /// </summary>
    public Batch? ValueFor(long cid)
    {
        Batch? value = null;
        var hash = default(Digest);
        foreach (var log in logs)
        {
            if (log.TryGetValue(cid, out var e) && e.Value is not null && e.Value.Hash == e.BatchHash)
            {
                value = e.Value;
                hash = e.BatchHash;
                break;
            }
        }
        if (value is null || logs.Count(l => l.TryGetValue(cid, out var e) && e.BatchHash == hash) < weak)
        {
            return null;
        }
        return value;
    }
}
