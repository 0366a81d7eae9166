using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>
/// When a behaviour sends a replica another proposal than its core made, the core's later WRITE
/// and ACCEPT for that instance must follow: this rewrites them to the substituted hash, with a
/// fresh valid signature, so the lie is consistent and reaches the receivers' protocol logic.
/// </summary>
internal sealed class SubstitutionMap(ByzantineContext ctx)
{
    private const int Bound = 512;
    private readonly Dictionary<(int Regency, long Cid, int To, Digest Original), Digest> _map = [];

    public void Add(int regency, long cid, int to, Digest original, Digest replacement)
    {
        if (_map.Count >= Bound)
        {
            var keep = _map.Keys.Max(k => k.Cid) - 16;
            foreach (var k in _map.Keys.Where(k => k.Cid < keep).ToList())
            {
                _map.Remove(k);
            }
            if (_map.Count >= Bound)
            {
                _map.Clear();
            }
        }
        _map[(regency, cid, to, original)] = replacement;
    }

    public BftMessage Rewrite(int to, BftMessage m) => m switch
    {
        Write w when _map.TryGetValue((w.Regency, w.ConsensusId, to, w.BatchHash), out var h) =>
            new Write(w.From, w.Regency, w.ConsensusId, h, ctx.SignWrite(w.Regency, w.ConsensusId, h)),
        Accept a when _map.TryGetValue((a.Regency, a.ConsensusId, to, a.BatchHash), out var h) =>
            new Accept(a.From, a.Regency, a.ConsensusId, h),
        _ => m,
    };
}
