using System.Security.Cryptography;
using SieveQ.Bft.Hosting.Crypto;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Transport;

namespace SieveQ.ReplicaSq;

/// <summary>
/// Who may open a stream: a receiver with a subscription signed by its enrolled key, or a pre-SQ with
/// one signed by its ordering-client identity key (the key the cluster config pins), in both cases
/// addressed to this replica and stamped within the freshness window of our clock, and not a replay: its
/// time must not be older than the last one accepted from that subscriber, nor be that very subscription
/// again (a recorded one, replayed within the window, would replace the live stream). A subscriber that
/// subscribes twice in one millisecond still can: ECDSA signatures differ each time. Anything else ends the
/// call with PermissionDenied (malformed bytes: InvalidArgument).
/// </summary>
internal sealed class SubscriptionCheck
{
    private readonly int _replica;
    private readonly long _freshnessMs;
    private readonly PublicKeyDirectory _enrolled;
    private readonly KeyRing _ordering;
    private readonly Func<int, bool> _isPreSq;
    private readonly ReplicaSqMetrics _metrics;
    private readonly Lock _lock = new();

    /// <summary>The last subscription accepted per (kind, subscriber): its time and signature. Bounded by the enrolled parties.</summary>
    private readonly Dictionary<(StructureKind, int), (long TimeMs, byte[] Signature)> _last = [];

    public SubscriptionCheck(int replica, TimeSpan freshness, PublicKeyDirectory enrolled, KeyRing ordering, Func<int, bool> isPreSq, ReplicaSqMetrics metrics)
    {
        _replica = replica;
        _freshnessMs = (long)freshness.TotalMilliseconds;
        _enrolled = enrolled;
        _ordering = ordering;
        _isPreSq = isPreSq;
        _metrics = metrics;
    }

    /// <returns>The receiver id.</returns>
    public int Receiver(ReadOnlyMemory<byte> canonical)
    {
        var s = Decode(canonical, StructureKind.ReceiverSubscription);
        var ok = _enrolled.IsReceiver(s.Subscriber)
            && SubscriptionCodec.IsValid(s, _replica, Now(), _freshnessMs, (data, sig) => _enrolled.VerifyReceiver(s.Subscriber, data.Span, sig.Span));
        return ok ? Fresh(StructureKind.ReceiverSubscription, s) : throw Refused("receiver subscription refused: signature, addressee or time");
    }

    /// <returns>The pre-SQ id.</returns>
    public int PreSq(ReadOnlyMemory<byte> canonical)
    {
        var s = Decode(canonical, StructureKind.PreSqSubscription);
        var ok = _isPreSq(s.Subscriber)
            && SubscriptionCodec.IsValid(s, _replica, Now(), _freshnessMs, (data, sig) => VerifyOrderingClient(s.Subscriber, data, sig));
        return ok ? Fresh(StructureKind.PreSqSubscription, s) : throw Refused("pre-SQ subscription refused: signature, addressee or time");
    }

    /// <summary>Records a valid subscription, or refuses it as a replay of one already accepted.</summary>
    private int Fresh(StructureKind kind, Subscription s)
    {
        lock (_lock)
        {
            if (_last.TryGetValue((kind, s.Subscriber), out var last)
                && (s.TimeMs < last.TimeMs || (s.TimeMs == last.TimeMs && s.Signature.Span.SequenceEqual(last.Signature))))
            {
                _metrics.SubscriptionReplayed();
                throw Refused("subscription refused: a replay (not newer than the subscription last accepted from this subscriber)");
            }
            _last[(kind, s.Subscriber)] = (s.TimeMs, s.Signature.ToArray());
        }
        return s.Subscriber;
    }

    private bool VerifyOrderingClient(int client, ReadOnlyMemory<byte> data, ReadOnlyMemory<byte> signature)
    {
        try
        {
            return _ordering.Verify(client, data.Span, signature.Span);
        }
        catch (CryptographicException)
        {
            return false;
        }
    }

    private Subscription Decode(ReadOnlyMemory<byte> canonical, StructureKind kind)
    {
        try
        {
            return SubscriptionCodec.Decode(canonical, kind);
        }
        catch (MalformedEnvelopeException e)
        {
            _metrics.SubscriptionRefused();
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, $"malformed subscription: {e.Message}");
        }
    }

    private GrpcCallException Refused(string why)
    {
        _metrics.SubscriptionRefused();
        return new GrpcCallException(GrpcStatusCode.PermissionDenied, why);
    }

    private static long Now() => DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
}
