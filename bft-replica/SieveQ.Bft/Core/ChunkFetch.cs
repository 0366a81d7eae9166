using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

/// <summary>What became of a chunk that arrived for a fetch.</summary>
internal enum ChunkVerdict
{
    /// <summary>Not asked of that replica (or no longer): dropped unread.</summary>
    Unsolicited,
    /// <summary>The replica said it does not hold the checkpoint; it is not asked again in this fetch.</summary>
    Refused,
    /// <summary>Wrong length or a hash other than the manifest's; the replica is not asked again in this fetch.</summary>
    Bad,
    Good,
}

/// <summary>
/// Assembling one checkpoint's bytes from chunks whose hashes an agreed manifest gives: which chunk is asked of which
/// replica, which arrived, which are asked again. Bounded: the buffer is the manifest's length (a state a correct
/// replica holds, since f+1 vouched for its root), at most <see cref="ReplicaConfig.StateChunksInFlight"/> requests are
/// outstanding, and after <see cref="ReplicaConfig.StateChunkRetries"/> repeats the fetch gives up. No clock, no I/O.
/// </summary>
internal sealed class ChunkFetch
{
    private readonly ReplicaConfig _config;
    private readonly List<int> _sources;
    private readonly HashSet<int> _excluded = [];
    private readonly byte[] _buffer;
    private readonly bool[] _have;
    private readonly Dictionary<int, (int Peer, long SentAt)> _outstanding = [];
    private readonly Queue<int> _again = new();
    private int _haveCount;
    private int _next;
    private int _turn;

    /// <param name="sources">Replicas that advertised this checkpoint as their latest or previous, so hold its bytes; asked in this order, round robin.</param>
    public ChunkFetch(ReplicaConfig config, long checkpointId, Digest stateHash, StateManifest manifest, IReadOnlyList<int> sources)
    {
        _config = config;
        CheckpointId = checkpointId;
        StateHash = stateHash;
        Manifest = manifest;
        _sources = [.. sources];
        _buffer = new byte[manifest.Length];
        _have = new bool[manifest.ChunkCount];
    }

    public long CheckpointId { get; }
    public Digest StateHash { get; }
    public StateManifest Manifest { get; }
    public int Retries { get; private set; }
    public bool IsComplete => _haveCount == _have.Length;

    /// <summary>No replica left to ask, or too many repeats: the attempt gets no state from this fetch.</summary>
    public bool HasFailed => Retries > _config.StateChunkRetries || (!IsComplete && _sources.All(_excluded.Contains));

    public int Outstanding => _outstanding.Count;

    /// <summary>The assembled bytes, once every chunk arrived and matched its hash.</summary>
    public byte[]? State => IsComplete ? _buffer : null;

    /// <summary>The requests to send now, up to the in-flight bound: chunks to ask again first, then the next new ones.</summary>
    public List<(int Peer, int Index)> NextRequests(long now)
    {
        var list = new List<(int, int)>();
        while (!HasFailed && _outstanding.Count < _config.StateChunksInFlight)
        {
            int index;
            if (_again.Count > 0)
            {
                index = _again.Dequeue();
            }
            else if (_next < _have.Length)
            {
                index = _next++;
            }
            else
            {
                break;
            }
            if (_have[index] || _outstanding.ContainsKey(index))
            {
                continue;
            }
            var peer = NextSource();
            _outstanding[index] = (peer, now);
            list.Add((peer, index));
        }
        return list;
    }

    public ChunkVerdict Accept(StateChunk chunk)
    {
        if (chunk.CheckpointId != CheckpointId || !_outstanding.TryGetValue(chunk.Index, out var asked) || asked.Peer != chunk.From)
        {
            return ChunkVerdict.Unsolicited;
        }
        _outstanding.Remove(chunk.Index);
        if (!chunk.Held)
        {
            Exclude(chunk.From, chunk.Index);
            return ChunkVerdict.Refused;
        }
        var data = chunk.Data.Span;
        if (data.Length != Manifest.LengthOf(chunk.Index) || Digest.Compute(data) != Manifest.ChunkHashes[chunk.Index])
        {
            Exclude(chunk.From, chunk.Index);
            return ChunkVerdict.Bad;
        }
        data.CopyTo(_buffer.AsSpan((int)Manifest.OffsetOf(chunk.Index)));
        _have[chunk.Index] = true;
        _haveCount++;
        return ChunkVerdict.Good;
    }

    /// <summary>Chunks asked more than the chunk time-out ago are asked again (of the next replica); returns how many.</summary>
    public int Expire(long now)
    {
        var late = _outstanding.Where(o => now - o.Value.SentAt >= _config.StateChunkTimeoutMs).Select(o => o.Key).Order().ToList();
        foreach (var index in late)
        {
            _outstanding.Remove(index);
            AskAgain(index);
        }
        return late.Count;
    }

    /// <summary>When the oldest outstanding request times out, or never.</summary>
    public long NextWakeup() => _outstanding.Count == 0 ? long.MaxValue : _outstanding.Values.Min(o => o.SentAt) + _config.StateChunkTimeoutMs;

    private void Exclude(int peer, int index)
    {
        _excluded.Add(peer);
        AskAgain(index);
    }

    private void AskAgain(int index)
    {
        Retries++;
        _again.Enqueue(index);
    }

    private int NextSource()
    {
        for (var i = 0; i < _sources.Count; i++)
        {
            var peer = _sources[_turn++ % _sources.Count];
            if (!_excluded.Contains(peer))
            {
                return peer;
            }
        }
        throw new InvalidOperationException("no source left; HasFailed is checked first");
    }
}
