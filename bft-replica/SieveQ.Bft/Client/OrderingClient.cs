using SieveQ.Bft.Codec;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Client;

/// <summary>A request the cluster ordered: f+1 replicas agreed on its instance and result.</summary>
public readonly record struct CompletedRequest(long Sequence, long ConsensusId, byte[] Result, long SubmittedAt, long CompletedAt);

/// <summary>
/// The client side of ordering as a pure state machine (time comes in as a value): numbers
/// requests, sends each to every replica, retransmits until f+1 replicas reply with the same
/// instance and result. Sequence numbers start above <paramref name="firstSequence"/> so a
/// restarted client with a persisted high-water mark never reuses one. The wait before each
/// retransmission doubles (up to <see cref="MaxBackoffFactor"/> times the first): under overload
/// a fixed period multiplies the very load that delays the replies. Each request is signed once, when it is
/// numbered, through <paramref name="signer"/> (the client's identity key); retransmissions carry the same proof.
/// </summary>
public sealed class OrderingClient
{
    public const int MaxBackoffFactor = 8;
    private readonly ReplicaConfig _config;
    private readonly IProofSigner _signer;
    private readonly long _retransmitMs;
    private readonly int _maxOutstanding;
    private readonly Dictionary<long, Outstanding> _outstanding = [];
    private readonly List<CompletedRequest> _completed = [];
    private long _nextSequence;

    public OrderingClient(int clientId, ReplicaConfig config, IProofSigner signer, long retransmitMs = 1_000, int maxOutstanding = 256, long firstSequence = 0)
    {
        ArgumentNullException.ThrowIfNull(signer);
        if (clientId < config.N)
        {
            throw new ArgumentOutOfRangeException(nameof(clientId), "client ids must not collide with replica ids 0..n-1");
        }
        ClientId = clientId;
        _config = config;
        _signer = signer;
        _retransmitMs = retransmitMs;
        _maxOutstanding = Math.Min(maxOutstanding, config.ClientWindow);
        _nextSequence = firstSequence + 1;
    }

    public int ClientId { get; }
    public int OutstandingCount => _outstanding.Count;
    public bool CanSubmit => _outstanding.Count < _maxOutstanding;
    public long HighestSequence => _nextSequence - 1;
    public long Retransmissions { get; private set; }

    /// <summary>Creates the next request; the caller sends it to every replica. Null when the window is full (back-pressure).</summary>
    public ClientRequest? Submit(byte[] payload, long now)
    {
        ArgumentNullException.ThrowIfNull(payload);
        if (payload.Length > _config.MaxRequestPayloadBytes)
        {
            throw new ArgumentOutOfRangeException(nameof(payload), $"a request of {payload.Length} bytes is above the cluster's limit of {_config.MaxRequestPayloadBytes}");
        }
        if (!CanSubmit)
        {
            return null;
        }
        var sequence = _nextSequence++;
        var req = new ClientRequest(ClientId, sequence, payload)
        {
            Proof = _signer.Sign(SigningBytes.ForRequest(ClientId, sequence, payload)),
        };
        _outstanding[req.Sequence] = new Outstanding(req, now, now + _retransmitMs);
        return req;
    }

    public void OnReply(Reply reply, long now)
    {
        if (reply.Client != ClientId || reply.From < 0 || reply.From >= _config.N || !_outstanding.TryGetValue(reply.Sequence, out var o))
        {
            return;
        }
        o.Votes[reply.From] = (reply.ConsensusId, Digest.Compute(reply.Result));
        var key = o.Votes[reply.From];
        var matching = 0;
        foreach (var v in o.Votes.Values)
        {
            if (v == key)
            {
                matching++;
            }
        }
        if (matching >= _config.Weak)
        {
            _outstanding.Remove(reply.Sequence);
            _completed.Add(new CompletedRequest(reply.Sequence, reply.ConsensusId, reply.Result, o.SubmittedAt, now));
        }
    }

    /// <summary>Requests whose retransmission time passed; the caller sends each again to every replica.</summary>
    public List<ClientRequest> DueRetransmissions(long now)
    {
        var due = new List<ClientRequest>();
        foreach (var o in _outstanding.Values)
        {
            if (o.NextRetransmit <= now)
            {
                o.Attempts++;
                o.NextRetransmit = now + _retransmitMs * Math.Min(MaxBackoffFactor, 1L << Math.Min(o.Attempts, 10));
                due.Add(o.Request);
                Retransmissions++;
            }
        }
        return due;
    }

    public long NextWakeup => _outstanding.Count == 0 ? long.MaxValue : _outstanding.Values.Min(o => o.NextRetransmit);

    public List<CompletedRequest> DrainCompleted()
    {
        var c = new List<CompletedRequest>(_completed);
        _completed.Clear();
        return c;
    }

    private sealed class Outstanding(ClientRequest request, long submittedAt, long nextRetransmit)
    {
        public ClientRequest Request { get; } = request;
        public long SubmittedAt { get; } = submittedAt;
        public long NextRetransmit { get; set; } = nextRetransmit;
        public int Attempts { get; set; }
        public Dictionary<int, (long Cid, Digest Result)> Votes { get; } = [];
    }
}
