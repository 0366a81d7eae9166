using System.Buffers;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Codec;

/// <summary>
/// Encodes and decodes protocol messages: one type byte, then the fields in a fixed order.
/// Decoding rejects unknown types, out-of-range counts and trailing bytes.
/// </summary>
public static class MessageCodec
{
    public const byte Version = 3;

    public static byte[] Encode(BftMessage message)
    {
        var buf = new ArrayBufferWriter<byte>(256);
        Encode(message, buf);
        return buf.WrittenSpan.ToArray();
    }

    public static void Encode(BftMessage message, IBufferWriter<byte> output)
    {
        var w = new WireWriter(output);
        w.U8(Version);
        w.U8((byte)message.Type);
        w.I32(message.From);
        switch (message)
        {
            case ClientRequest m:
                w.I64(m.Sequence);
                w.Bytes(m.Payload);
                w.Bytes(m.Proof);
                break;
            case Reply m:
                w.I32(m.Client);
                w.I64(m.Sequence);
                w.I64(m.ConsensusId);
                w.Bytes(m.Result);
                break;
            case Forward m:
                WriteRequests(w, m.Requests);
                break;
            case Propose m:
                w.I32(m.Regency);
                w.I64(m.ConsensusId);
                BatchCodec.Write(w, m.Value);
                break;
            case Write m:
                w.I32(m.Regency);
                w.I64(m.ConsensusId);
                w.Digest(m.BatchHash);
                w.Bytes(m.Signature);
                break;
            case Accept m:
                w.I32(m.Regency);
                w.I64(m.ConsensusId);
                w.Digest(m.BatchHash);
                break;
            case Heartbeat m:
                w.I32(m.Regency);
                w.I64(m.LastDecided);
                break;
            case Stop m:
                w.I32(m.NewRegency);
                WriteRequests(w, m.TimedOut);
                break;
            case StopData m:
                WriteStopData(w, m, includeValues: true);
                break;
            case Sync m:
                w.I32(m.Regency);
                w.I32(m.Evidence.Count);
                foreach (var sd in m.Evidence)
                {
                    w.I32(sd.From);
                    WriteStopData(w, sd, includeValues: false);
                }
                w.I64(m.ConsensusId);
                WriteOptionalBatch(w, m.Value);
                WriteOptionalBatch(w, m.PriorValue);
                break;
            case Checkpoint m:
                w.I64(m.ConsensusId);
                w.Digest(m.StateHash);
                break;
            case StateRequest m:
                w.I64(m.LastExecuted);
                w.Bool(m.WantBody);
                break;
            case StateReply m:
                w.I64(m.CheckpointId);
                w.Digest(m.StateHash);
                w.Digest(m.ManifestRoot);
                w.Bool(m.Manifest is not null);
                if (m.Manifest is not null)
                {
                    WriteManifest(w, m.Manifest);
                }
                w.I32(m.Log.Count);
                foreach (var d in m.Log)
                {
                    w.I64(d.ConsensusId);
                    w.Digest(d.BatchHash);
                    WriteOptionalBatch(w, d.Value);
                }
                w.I64(m.PreviousCheckpointId);
                w.Digest(m.PreviousStateHash);
                w.Digest(m.PreviousManifestRoot);
                break;
            case StateChunkRequest m:
                w.I64(m.CheckpointId);
                w.I32(m.Index);
                break;
            case StateChunk m:
                w.I64(m.CheckpointId);
                w.I32(m.Index);
                w.Bool(m.Held);
                w.Bytes(m.Data.Span);
                break;
            default:
                throw new ArgumentException($"no encoding for {message.GetType().Name}", nameof(message));
        }
    }

    /// <param name="known">Request payloads already held; a PROPOSE's requests share them when their bytes are the same.</param>
    public static BftMessage Decode(ReadOnlySpan<byte> frame, IKnownRequestPayloads? known = null)
    {
        var r = new WireReader(frame);
        var version = r.U8("version");
        if (version != Version)
        {
            throw new MalformedMessageException($"unsupported protocol version {version}");
        }
        var type = (MessageType)r.U8("type");
        var from = r.NonNegative("sender");
        BftMessage m = type switch
        {
            MessageType.Request => new ClientRequest(from, r.NonNegative64("sequence"), r.Bytes(WireLimits.MaxPayloadBytes, "payload"))
            {
                Proof = r.Bytes(WireLimits.MaxRequestProofBytes, "request proof"),
            },
            MessageType.Reply => new Reply(from, r.NonNegative("client"), r.NonNegative64("sequence"), r.NonNegative64("cid"), r.Bytes(WireLimits.MaxResultBytes, "result")),
            MessageType.Forward => new Forward(from, ReadRequests(ref r, from: null)),
            MessageType.Propose => new Propose(from, r.NonNegative("regency"), r.NonNegative64("cid"), BatchCodec.Read(ref r, known)),
            MessageType.Write => new Write(from, r.NonNegative("regency"), r.NonNegative64("cid"), r.Digest("hash"), r.Bytes(WireLimits.MaxSignatureBytes, "signature")),
            MessageType.Accept => new Accept(from, r.NonNegative("regency"), r.NonNegative64("cid"), r.Digest("hash")),
            MessageType.Heartbeat => new Heartbeat(from, r.NonNegative("regency"), r.NonNegative64("last decided")),
            MessageType.Stop => new Stop(from, r.NonNegative("regency"), ReadRequests(ref r, from: null)),
            MessageType.StopData => ReadStopData(ref r, from, includeValues: true),
            MessageType.Sync => ReadSync(ref r, from),
            MessageType.Checkpoint => new Checkpoint(from, r.NonNegative64("cid"), r.Digest("state hash")),
            MessageType.StateRequest => new StateRequest(from, r.NonNegative64("last executed"), r.Bool("want body")),
            MessageType.StateReply => ReadStateReply(ref r, from),
            MessageType.StateChunkRequest => new StateChunkRequest(from, r.NonNegative64("chunk checkpoint cid"), ReadChunkIndex(ref r)),
            MessageType.StateChunk => ReadStateChunk(ref r, from),
            _ => throw new MalformedMessageException($"unknown message type {(byte)type}"),
        };
        r.End(type.ToString());
        return m;
    }

    private static void WriteRequests(WireWriter w, IReadOnlyList<ClientRequest> requests)
    {
        w.I32(requests.Count);
        foreach (var q in requests)
        {
            w.I32(q.From);
            w.I64(q.Sequence);
            w.Bytes(q.Payload);
            w.Bytes(q.Proof);
        }
    }

    private static List<ClientRequest> ReadRequests(ref WireReader r, int? from)
    {
        _ = from;
        var n = r.Count(WireLimits.MaxRequestsPerForward, "request count");
        var list = new List<ClientRequest>(n);
        for (var i = 0; i < n; i++)
        {
            list.Add(BatchCodec.ReadRequestBody(ref r));
        }
        return list;
    }

    private static void WriteOptionalBatch(WireWriter w, Batch? b)
    {
        w.Bool(b is not null);
        if (b is not null)
        {
            BatchCodec.Write(w, b);
        }
    }

    private static Batch? ReadOptionalBatch(ref WireReader r) => r.Bool("has batch") ? BatchCodec.Read(ref r) : null;

    private static void WriteStopData(WireWriter w, StopData m, bool includeValues)
    {
        w.I32(m.NewRegency);
        w.I64(m.LastDecided);
        w.I32(m.Certificates.Count);
        foreach (var c in m.Certificates)
        {
            w.I64(c.ConsensusId);
            w.I32(c.Regency);
            w.Digest(c.BatchHash);
            WriteOptionalBatch(w, includeValues ? c.Value : null);
            w.I32(c.Writes.Count);
            foreach (var s in c.Writes)
            {
                w.I32(s.Replica);
                w.Bytes(s.Signature);
            }
        }
        w.Bytes(m.Signature);
    }

    private static StopData ReadStopData(ref WireReader r, int from, bool includeValues)
    {
        var reg = r.NonNegative("regency");
        var last = r.I64("last decided");
        if (last < 0)
        {
            throw new MalformedMessageException("stopdata: negative last decided");
        }
        var n = r.Count(WireLimits.MaxCertificates, "certificate count");
        var certs = new PreparedCertificate[n];
        for (var i = 0; i < n; i++)
        {
            var cid = r.NonNegative64("cert cid");
            var creg = r.NonNegative("cert regency");
            var hash = r.Digest("cert hash");
            var value = ReadOptionalBatch(ref r);
            if (!includeValues && value is not null)
            {
                throw new MalformedMessageException("stopdata inside sync must not carry values");
            }
            var nw = r.Count(WireLimits.MaxReplicas, "write count");
            var writes = new WriteSignature[nw];
            for (var j = 0; j < nw; j++)
            {
                writes[j] = new WriteSignature(r.NonNegative("write replica"), r.Bytes(WireLimits.MaxSignatureBytes, "write signature"));
            }
            certs[i] = new PreparedCertificate(cid, creg, hash, value, writes);
        }
        var sig = r.Bytes(WireLimits.MaxSignatureBytes, "stopdata signature");
        return new StopData(from, reg, last, certs, sig);
    }

    private static Sync ReadSync(ref WireReader r, int from)
    {
        var reg = r.NonNegative("regency");
        var n = r.Count(WireLimits.MaxReplicas, "evidence count");
        var evidence = new StopData[n];
        for (var i = 0; i < n; i++)
        {
            var sdFrom = r.NonNegative("evidence sender");
            evidence[i] = ReadStopData(ref r, sdFrom, includeValues: false);
        }
        var cid = r.NonNegative64("sync cid");
        var value = ReadOptionalBatch(ref r);
        var prior = ReadOptionalBatch(ref r);
        return new Sync(from, reg, evidence, cid, value, prior);
    }

    private static StateReply ReadStateReply(ref WireReader r, int from)
    {
        var cp = r.NonNegative64("checkpoint cid");
        var hash = r.Digest("state hash");
        var root = r.Digest("manifest root");
        var manifest = r.Bool("has manifest") ? ReadManifest(ref r) : null;
        var n = r.Count(WireLimits.MaxLogEntries, "log count");
        var log = new LoggedDecision[n];
        for (var i = 0; i < n; i++)
        {
            log[i] = new LoggedDecision(r.NonNegative64("log cid"), r.Digest("log hash"), ReadOptionalBatch(ref r));
        }
        var previous = r.NonNegative64("previous checkpoint cid");
        var previousHash = r.Digest("previous state hash");
        var previousRoot = r.Digest("previous manifest root");
        return new StateReply(from, cp, hash, root, manifest, log, previous, previousHash, previousRoot);
    }

    private static void WriteManifest(WireWriter w, StateManifest m)
    {
        w.I64(m.Length);
        w.I32(m.ChunkBytes);
        w.I32(m.ChunkHashes.Count);
        foreach (var d in m.ChunkHashes)
        {
            w.Digest(d);
        }
    }

    /// <summary>Every field bounded, and the chunk count the one the length and chunk size imply.</summary>
    private static StateManifest ReadManifest(ref WireReader r)
    {
        var length = r.NonNegative64("state length");
        if (length > WireLimits.MaxStateBytes)
        {
            throw new MalformedMessageException($"manifest: state length {length} above limit {WireLimits.MaxStateBytes}");
        }
        var chunkBytes = r.NonNegative("chunk size");
        if (chunkBytes < WireLimits.MinStateChunkBytes || chunkBytes > WireLimits.MaxStateChunkBytes)
        {
            throw new MalformedMessageException($"manifest: chunk size {chunkBytes} outside {WireLimits.MinStateChunkBytes}..{WireLimits.MaxStateChunkBytes}");
        }
        var n = r.Count(WireLimits.MaxStateChunks, "chunk count");
        if (n != StateManifest.ChunksFor(length, chunkBytes))
        {
            throw new MalformedMessageException($"manifest: {n} chunks for {length} bytes in chunks of {chunkBytes}");
        }
        var hashes = new Digest[n];
        for (var i = 0; i < n; i++)
        {
            hashes[i] = r.Digest("chunk hash");
        }
        return new StateManifest(length, chunkBytes, hashes);
    }

    private static int ReadChunkIndex(ref WireReader r)
    {
        var index = r.NonNegative("chunk index");
        return index < WireLimits.MaxStateChunks ? index : throw new MalformedMessageException($"chunk index {index} above limit {WireLimits.MaxStateChunks - 1}");
    }

    private static StateChunk ReadStateChunk(ref WireReader r, int from)
    {
        var cp = r.NonNegative64("chunk checkpoint cid");
        var index = ReadChunkIndex(ref r);
        var held = r.Bool("chunk held");
        var data = r.Bytes(WireLimits.MaxStateChunkBytes, "chunk data");
        if (!held && data.Length > 0)
        {
            throw new MalformedMessageException("state chunk: a refusal carries no data");
        }
        return new StateChunk(from, cp, index, held, data);
    }
}
