using SieveQ.Bft.Codec;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Bft.Simulation.Faults;
using SieveQ.Bft.Simulation.Kernel;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>
/// What a Byzantine behaviour may use: its own replica's signer (never another's, never client
/// secrets), a view of its own real core, what it has seen on its links, and a random stream.
/// </summary>
internal sealed class ByzantineContext(
    ByzantineAssignment assignment,
    ReplicaConfig config,
    IProofSigner signer,
    SimRandom rng,
    SimStats stats,
    Func<ReplicaCore?> core,
    Func<long> localNow,
    Func<long> globalNow)
{
    private const int Remembered = 128;
    private readonly List<BftMessage> _inbound = [];
    private readonly List<BftMessage> _outbound = [];

    public int Self => assignment.Replica;
    public ByzantineAssignment Assignment => assignment;
    public ReplicaConfig Config => config;
    public SimRandom Rng => rng;
    public ReplicaCore? Core => core();
    public long LocalNow => localNow();
    public long GlobalNow => globalNow();
    public int Regency => Core?.Regency ?? 0;
    public long LastDecided => Core?.LastDecided ?? 0;
    public bool IsLeader => Core?.IsLeader ?? false;
    public int Leader => Core?.Leader ?? 0;

    /// <summary>Messages that reached this replica after the host's checks (so they are genuine).</summary>
    public IReadOnlyList<BftMessage> Inbound => _inbound;
    /// <summary>Messages this replica sent.</summary>
    public IReadOnlyList<BftMessage> Outbound => _outbound;

    public void Count(string action, long by = 1) => stats.Count($"byz.{action}", by);

    public void RememberInbound(BftMessage m) => Remember(_inbound, m);

    public void RememberOutbound(BftMessage m) => Remember(_outbound, m);

    private void Remember(List<BftMessage> ring, BftMessage m)
    {
        if (ring.Count >= Remembered)
        {
            ring[rng.Next(Remembered)] = m;
        }
        else
        {
            ring.Add(m);
        }
    }

    public byte[] SignWrite(int regency, long cid, Digest hash) => signer.Sign(SigningBytes.ForWrite(regency, cid, hash));

    public StopData Resign(StopData sd) =>
        sd with { Signature = signer.Sign(SigningBytes.ForStopData(sd.From, sd.NewRegency, sd.LastDecided, sd.Certificates)) };

    public Digest RandomDigest() => new(rng.Bytes(Digest.Size));

    public IEnumerable<int> OtherReplicas() => Enumerable.Range(0, config.N).Where(r => r != Self);

    public int RandomOtherReplica()
    {
        var r = rng.Next(config.N - 1);
        return r >= Self ? r + 1 : r;
    }

    /// <summary>A batch as valid as the original but with a different hash.</summary>
    public Batch ValidAlternative(Batch b) =>
        b.Requests.Count >= 2 && rng.Chance(0.5)
            ? new Batch(b.Timestamp, b.Requests.Reverse().ToArray())
            : new Batch(b.Timestamp + 1, b.Requests);
}
