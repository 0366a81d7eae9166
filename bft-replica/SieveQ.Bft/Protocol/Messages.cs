namespace SieveQ.Bft.Protocol;

/// <summary>Wire type tags. Values are part of the frame format and never reused.</summary>
public enum MessageType : byte
{
    Request = 1,
    Reply = 2,
    Forward = 3,
    Propose = 4,
    Write = 5,
    Accept = 6,
    Heartbeat = 7,
    Stop = 8,
    StopData = 9,
    Sync = 10,
    Checkpoint = 11,
    StateRequest = 12,
    StateReply = 13,
    StateChunkRequest = 14,
    StateChunk = 15,
}

/// <summary>
/// Every protocol message names its sender. Transports and the simulator check that the name
/// matches the authenticated link it arrived on, so the core can trust <see cref="From"/>.
/// </summary>
public abstract record BftMessage(int From)
{
    public abstract MessageType Type { get; }
}

/// <summary>
/// A client's request; (Client, Sequence) identifies it across retransmissions. <see cref="Proof"/> is the
/// client's signature over <see cref="Codec.SigningBytes.ForRequest"/>: it travels with the request inside
/// FORWARD, STOP, PROPOSE, SYNC and the decided log, so a replica that never saw the client's own link can
/// still tell a request the client made from one a Byzantine replica made up in its name.
/// </summary>
public sealed record ClientRequest(int From, long Sequence, byte[] Payload) : BftMessage(From)
{
    public override MessageType Type => MessageType.Request;
    public RequestId Id => new(From, Sequence);
    public byte[] Proof { get; init; } = [];
}

public readonly record struct RequestId(int Client, long Sequence) : IComparable<RequestId>
{
    public int CompareTo(RequestId other) =>
        Client != other.Client ? Client.CompareTo(other.Client) : Sequence.CompareTo(other.Sequence);
    public override string ToString() => $"{Client}:{Sequence}";
}

/// <summary>What a replica tells a client once its request executed; f+1 matching replies make it final.</summary>
public sealed record Reply(int From, int Client, long Sequence, long ConsensusId, byte[] Result) : BftMessage(From)
{
    public override MessageType Type => MessageType.Reply;
}

/// <summary>Requests a follower hands to the leader when their first time-out expires.</summary>
public sealed record Forward(int From, IReadOnlyList<ClientRequest> Requests) : BftMessage(From)
{
    public override MessageType Type => MessageType.Forward;
}

/// <summary>The leader's proposal of a batch for one consensus instance.</summary>
public sealed record Propose(int From, int Regency, long ConsensusId, Batch Value) : BftMessage(From)
{
    public override MessageType Type => MessageType.Propose;
}

/// <summary>
/// WRITE carries a signature because 2f+1 of them form the prepared certificate that a replica
/// must be able to show to a new leader.
/// </summary>
public sealed record Write(int From, int Regency, long ConsensusId, Digest BatchHash, byte[] Signature) : BftMessage(From)
{
    public override MessageType Type => MessageType.Write;
}

/// <summary>ACCEPT is never shown to third parties, so the link MAC is enough.</summary>
public sealed record Accept(int From, int Regency, long ConsensusId, Digest BatchHash) : BftMessage(From)
{
    public override MessageType Type => MessageType.Accept;
}

/// <summary>Sent by an idle leader so that a dead leader is noticed without client traffic.</summary>
public sealed record Heartbeat(int From, int Regency, long LastDecided) : BftMessage(From)
{
    public override MessageType Type => MessageType.Heartbeat;
}

/// <summary>A complaint about the current leader: the sender wants <see cref="NewRegency"/> installed.</summary>
public sealed record Stop(int From, int NewRegency, IReadOnlyList<ClientRequest> TimedOut) : BftMessage(From)
{
    public override MessageType Type => MessageType.Stop;
}

/// <summary>
/// What a replica knows, sent to the new leader: its last decided instance and its prepared
/// certificates for the two highest instances it prepared. Signed, so that the new leader can
/// show it inside SYNC. The signature covers the certificates' hashes, not the batch bodies.
/// </summary>
public sealed record StopData(int From, int NewRegency, long LastDecided, IReadOnlyList<PreparedCertificate> Certificates, byte[] Signature) : BftMessage(From)
{
    public override MessageType Type => MessageType.StopData;
}

/// <summary>
/// The new leader's justification: 2f+1 STOPDATA, and the instance and value it chose from them.
/// <see cref="PriorValue"/> is the value the evidence binds for instance <see cref="ConsensusId"/> - 1 (the
/// highest-regency certificate for it), or null when the evidence holds none: that instance is decided, but
/// after a whole-cluster power loss its decision may survive on fewer than f+1 disks, so state transfer alone
/// could not bring it back (docs/bft-protocol.md, "Recovery from lost decisions").
/// </summary>
public sealed record Sync(int From, int Regency, IReadOnlyList<StopData> Evidence, long ConsensusId, Batch? Value, Batch? PriorValue = null) : BftMessage(From)
{
    public override MessageType Type => MessageType.Sync;
}

public sealed record Checkpoint(int From, long ConsensusId, Digest StateHash) : BftMessage(From)
{
    public override MessageType Type => MessageType.Checkpoint;
}

/// <summary>A replica that has proof it is behind asks for state; <see cref="WantBody"/> picks the one replica that sends it.</summary>
public sealed record StateRequest(int From, long LastExecuted, bool WantBody) : BftMessage(From)
{
    public override MessageType Type => MessageType.StateRequest;
}

/// <summary>
/// A checkpoint and the decided log after it. Only the replica named by <see cref="StateRequest.WantBody"/> sends
/// batch bodies; the others send hashes: the requester accepts bodies only when f+1 replicas vouch for their hashes.
/// The checkpoint's bytes never travel here: <see cref="ManifestRoot"/> names its chunk list, which the requester
/// agrees on with f+1 replies, <see cref="Manifest"/> is that list (sent when the requester is behind the checkpoint
/// and the replier holds its bytes), and the chunks come one by one in <see cref="StateChunk"/>.
/// </summary>
/// <para>
/// <see cref="PreviousCheckpointId"/>, <see cref="PreviousStateHash"/> and <see cref="PreviousManifestRoot"/> name the
/// checkpoint before the latest one (0 when unknown): a replica whose latest checkpoint is newer than a peer's still
/// vouches for the peer's, so a requester more than one interval behind finds f+1 voices for one checkpoint and the
/// entries after it.
/// </para>
public sealed record StateReply(int From, long CheckpointId, Digest StateHash, Digest ManifestRoot, StateManifest? Manifest, IReadOnlyList<LoggedDecision> Log,
    long PreviousCheckpointId = 0, Digest PreviousStateHash = default, Digest PreviousManifestRoot = default) : BftMessage(From)
{
    public override MessageType Type => MessageType.StateReply;
}

/// <summary>Asks for chunk <see cref="Index"/> of the checkpoint at <see cref="CheckpointId"/>, which the asked replica advertised.</summary>
public sealed record StateChunkRequest(int From, long CheckpointId, int Index) : BftMessage(From)
{
    public override MessageType Type => MessageType.StateChunkRequest;
}

/// <summary>
/// One chunk of a checkpoint's bytes, or a refusal (<see cref="Held"/> false, no data) when the replier no longer
/// holds that checkpoint. <see cref="Data"/> is a view of the replier's retained checkpoint: serving copies nothing
/// but the frame.
/// </summary>
public sealed record StateChunk(int From, long CheckpointId, int Index, bool Held, ReadOnlyMemory<byte> Data) : BftMessage(From)
{
    public override MessageType Type => MessageType.StateChunk;
}

/// <summary>A decided instance in a state reply; <see cref="Value"/> is null in hash-only replies.</summary>
public sealed record LoggedDecision(long ConsensusId, Digest BatchHash, Batch? Value);

/// <summary>
/// 2f+1 signed WRITEs for one (regency, instance, hash). <see cref="Value"/> travels to the new
/// leader in STOPDATA and is dropped when the STOPDATA is re-shown in SYNC.
/// </summary>
public sealed record PreparedCertificate(long ConsensusId, int Regency, Digest BatchHash, Batch? Value, IReadOnlyList<WriteSignature> Writes);

public readonly record struct WriteSignature(int Replica, byte[] Signature);
