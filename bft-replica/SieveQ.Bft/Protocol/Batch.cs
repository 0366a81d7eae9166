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

    public long Timestamp { get; }
    public IReadOnlyList<ClientRequest> Requests { get; }

    public Digest Hash => _hash ??= Digest.Compute(Codec.BatchCodec.Encode(this));

    public int EncodedSize => _encodedSize >= 0 ? _encodedSize : (_encodedSize = Codec.BatchCodec.EncodedSize(this));

    public override string ToString() => $"Batch(ts={Timestamp}, n={Requests.Count}, {Hash})";
}
