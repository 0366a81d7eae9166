using System.Security.Cryptography;
using System.Text;
using SieveQ.Bft.Client;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Tests.Core;

/// <summary>HMAC stands in for signatures: unforgeable without the replica's key, deterministic.</summary>
internal sealed class HmacProofs(int n) : IProofVerifier
{
    private readonly byte[][] _keys = Enumerable.Range(0, n).Select(i => SHA256.HashData(Encoding.UTF8.GetBytes($"replica-{i}"))).ToArray();

    public IProofSigner SignerFor(int replica) => new Signer(_keys[replica]);

    /// <summary>Clients sign their requests; these tests drive cores directly, where no host checks the proofs.</summary>
    public static IProofSigner ClientSigner(int client) => new Signer(SHA256.HashData(Encoding.UTF8.GetBytes($"client-{client}")));

    public bool Verify(int replica, ReadOnlySpan<byte> data, ReadOnlySpan<byte> signature) =>
        replica >= 0 && replica < n && CryptographicOperations.FixedTimeEquals(HMACSHA256.HashData(_keys[replica], data), signature);

    private sealed class Signer(byte[] key) : IProofSigner
    {
        public byte[] Sign(ReadOnlySpan<byte> data) => HMACSHA256.HashData(key, data);
    }
}

/// <summary>What <see cref="ChainApp"/> gives back besides its replies: the instance, the requests it executed and the head after them.</summary>
internal sealed record ChainOutputs(long ConsensusId, IReadOnlyList<RequestId> Executed, string Head) : IExecutionOutputs;

/// <summary>
/// A chain of executed requests: equal chain heads mean equal histories. <paramref name="paddingBytes"/> makes its
/// snapshot that much larger (bytes that follow from the head, checked on restore), for state-transfer tests.
/// </summary>
internal sealed class ChainApp(int paddingBytes = 0) : IReplicatedApplication
{
    public byte[] Head { get; private set; } = new byte[32];
    public List<RequestId> Executed { get; } = [];

    public ExecutionOutcome Execute(DecisionContext context, IReadOnlyList<ClientRequest> requests)
    {
        var results = new List<byte[]>(requests.Count);
        foreach (var r in requests)
        {
            Head = SHA256.HashData([.. Head, .. BitConverter.GetBytes(r.From), .. BitConverter.GetBytes(r.Sequence), .. r.Payload]);
            Executed.Add(r.Id);
            results.Add(Head[..8]);
        }
        return new ExecutionOutcome(results, requests.Count == 0 ? null : new ChainOutputs(context.ConsensusId, [.. requests.Select(r => r.Id)], Convert.ToHexString(Head)));
    }

    public byte[] TakeSnapshot()
    {
        var snapshot = new byte[Head.Length + paddingBytes];
        Head.CopyTo(snapshot, 0);
        Pad(snapshot);
        return snapshot;
    }

    public void RestoreSnapshot(ReadOnlySpan<byte> snapshot)
    {
        var expected = snapshot.ToArray();
        Pad(expected);
        if (snapshot.Length != 32 + paddingBytes || !snapshot.SequenceEqual(expected))
        {
            throw new InvalidOperationException("snapshot padding does not follow from its head");
        }
        Head = snapshot[..32].ToArray();
    }

    private static void Pad(byte[] snapshot)
    {
        for (var i = 32; i < snapshot.Length; i++)
        {
            snapshot[i] = (byte)(snapshot[i % 32] + (i / 32));
        }
    }
}

/// <summary>
/// A minimal synchronous network for unit tests of the core: messages are delivered in FIFO
/// order, with the ability to silence replicas. The full fault simulator lives in SieveQ.Bft.Simulation.
/// </summary>
internal sealed class MiniCluster
{
    private readonly Queue<(int To, BftMessage Message)> _wire = new();
    public ReplicaConfig Config { get; }
    public HmacProofs Proofs { get; }
    public ReplicaCore?[] Replicas { get; }
    public ChainApp[] Apps { get; }
    public List<DurableRecord>[] Disks { get; }

    /// <summary>Everything each replica's core emitted, in order, across restarts.</summary>
    public List<CoreOutput>[] Emitted { get; }
    public Dictionary<int, OrderingClient> Clients { get; } = [];
    public HashSet<int> Silenced { get; } = [];
    public long Now { get; private set; }

    /// <summary>What a replica sends to another, as the wire carries it: change it (a Byzantine sender) or drop it (null).</summary>
    public Func<int, int, BftMessage, BftMessage?>? Tamper { get; set; }

    /// <summary>Sees each message a replica's core is about to take.</summary>
    public Action<int, BftMessage>? Delivering { get; set; }

    /// <summary>
    /// Every message crosses the wire as a frame: encoded, refused above <see cref="Bft.Codec.WireLimits.MaxFrameBytes"/>
    /// as the transport refuses it, decoded. Off by default: most tests need not pay for it.
    /// </summary>
    public bool ThroughCodec { get; init; }

    public long LargestFrame { get; private set; }

    private readonly int _snapshotPaddingBytes;

    public MiniCluster(ReplicaConfig? config = null, int snapshotPaddingBytes = 0)
    {
        _snapshotPaddingBytes = snapshotPaddingBytes;
        Config = config ?? new ReplicaConfig();
        Proofs = new HmacProofs(Config.N);
        Apps = Enumerable.Range(0, Config.N).Select(_ => new ChainApp(snapshotPaddingBytes)).ToArray();
        Disks = Enumerable.Range(0, Config.N).Select(_ => new List<DurableRecord>()).ToArray();
        Emitted = Enumerable.Range(0, Config.N).Select(_ => new List<CoreOutput>()).ToArray();
        Replicas = Enumerable.Range(0, Config.N).Select(i => (ReplicaCore?)new ReplicaCore(Config, i, Apps[i], Proofs.SignerFor(i))).ToArray();
    }

    public OrderingClient Client(int id)
    {
        if (!Clients.TryGetValue(id, out var c))
        {
            c = new OrderingClient(id, Config, HmacProofs.ClientSigner(id), retransmitMs: 500);
            Clients[id] = c;
        }
        return c;
    }

    public void Submit(int client, byte[] payload)
    {
        var req = Client(client).Submit(payload, Now) ?? throw new InvalidOperationException("client window full");
        for (var r = 0; r < Config.N; r++)
        {
            _wire.Enqueue((r, req));
        }
    }

    public void Crash(int replica) => Replicas[replica] = null;

    /// <summary>Puts a message on the wire as if <see cref="BftMessage.From"/> had sent it (a Byzantine replica's own message).</summary>
    public void Inject(int to, BftMessage message) => _wire.Enqueue((to, message));

    public void Restart(int replica)
    {
        Apps[replica] = new ChainApp(_snapshotPaddingBytes);
        Replicas[replica] = new ReplicaCore(Config, replica, Apps[replica], Proofs.SignerFor(replica), Disks[replica], Now);
    }

    /// <summary>Delivers messages and advances time in steps of <paramref name="stepMs"/> until the deadline.</summary>
    public void Run(long durationMs, long stepMs = 5)
    {
        var end = Now + durationMs;
        while (Now < end)
        {
            var budget = 100_000;
            while (_wire.Count > 0 && budget-- > 0)
            {
                var (to, m) = _wire.Dequeue();
                Deliver(to, m);
            }
            Now += stepMs;
            for (var i = 0; i < Config.N; i++)
            {
                if (Replicas[i] is { } core && !Silenced.Contains(i))
                {
                    core.Tick(Now);
                    Flush(i, core);
                }
            }
            foreach (var c in Clients.Values)
            {
                foreach (var req in c.DueRetransmissions(Now))
                {
                    for (var r = 0; r < Config.N; r++)
                    {
                        _wire.Enqueue((r, req));
                    }
                }
            }
        }
    }

    private void Deliver(int to, BftMessage m)
    {
        if (to >= Config.N)
        {
            if (m is Reply reply && Clients.TryGetValue(to, out var client))
            {
                client.OnReply(reply, Now);
            }
            return;
        }
        if (Silenced.Contains(to) || Silenced.Contains(m.From) || Replicas[to] is not { } core)
        {
            return;
        }
        if (ThroughCodec)
        {
            var frame = Bft.Codec.MessageCodec.Encode(m);
            LargestFrame = Math.Max(LargestFrame, frame.Length);
            if (frame.Length > Bft.Codec.WireLimits.MaxFrameBytes)
            {
                throw new InvalidOperationException($"a {m.Type} of {frame.Length} bytes does not fit a frame");
            }
            m = Bft.Codec.MessageCodec.Decode(frame);
        }
        if (!ProofCheck.VerifySignatures(m, Proofs, Config.N))
        {
            return;
        }
        Delivering?.Invoke(to, m);
        core.Step(m, Now);
        Flush(to, core);
    }

    private void Flush(int from, ReplicaCore core)
    {
        foreach (var o in core.DrainOutputs())
        {
            Emitted[from].Add(o);
            switch (o)
            {
                case SendTo s:
                    if ((Tamper is null ? s.Message : Tamper(from, s.To, s.Message)) is { } sent)
                    {
                        _wire.Enqueue((s.To, sent));
                    }
                    break;
                case SendToReplicas b:
                    for (var r = 0; r < Config.N; r++)
                    {
                        if (r != from)
                        {
                            _wire.Enqueue((r, b.Message));
                        }
                    }
                    break;
                case Persist p:
                    Disks[from].Add(p.Record);
                    break;
                case TruncateDurableLog t:
                    Disks[from].RemoveAll(d => d is DecisionRecord dr && dr.ConsensusId <= t.UpToConsensusId
                        || d is PreparedRecord pr && pr.Certificate.ConsensusId <= t.UpToConsensusId
                        || d is CheckpointRecord cr && cr.ConsensusId < t.UpToConsensusId);
                    break;
            }
        }
    }
}
