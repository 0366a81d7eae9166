namespace SieveQ.Bft.Protocol;

/// <summary>
/// The value consensus decides: a leader-stamped timestamp (milliseconds, agreed time) and the requests in order.
/// The hash is over the canonical encoding, computed once and cached.
/// </summary>
public sealed class Batch
{
    private Digest? _hash;
    private int _encodedSize = -1;

    public Batch(long timestamp, IReadOnlyList<ClientRequest> requests)
    {
        Timestamp = timestamp;
        Requests = requests;
    }

    /// <summary>A batch decoded from its canonical bytes, whose hash the decoder took over them.</summary>
    internal Batch(long timestamp, IReadOnlyList<ClientRequest> requests, Digest hashOfEncoding)
        : this(timestamp, requests)
    {
        _hash = hashOfEncoding;
    }

    public long Timestamp { get; }
    public IReadOnlyList<ClientRequest> Requests { get; }

    public Digest Hash => _hash ??= Codec.BatchCodec.ComputeHash(this);

    public int EncodedSize => _encodedSize >= 0 ? _encodedSize : (_encodedSize = Codec.BatchCodec.EncodedSize(this));

    public override string ToString() => $"Batch(ts={Timestamp}, n={Requests.Count}, {Hash})";
}
