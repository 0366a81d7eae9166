using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Filtering;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sieve.Replica;

/// <summary>
/// Signature checks of the three signed item kinds an ordering request carries (sender messages,
/// ACKREQs, receiver acknowledgements), through the verdict cache: the verifier fills it ahead of
/// ordering, execution takes from it. An authentic sender message's payload is also prescanned by the
/// rules (<see cref="IPayloadPrescan"/>), and the result is kept with the verdict. Thread-safe.
/// </summary>
public sealed class ItemAuthenticator
{
    private readonly PublicKeyDirectory _keys;
    private readonly SenderSignatureCheck _senderCheck;
    private readonly SignatureVerdictCache _cache;
    private readonly IPayloadPrescan? _prescan;

    public ItemAuthenticator(PublicKeyDirectory keys, SignatureVerdictCache cache, IPayloadPrescan? prescan = null)
    {
        _keys = keys;
        _cache = cache;
        _prescan = prescan;
        _senderCheck = new SenderSignatureCheck(keys);
    }

    public SignatureVerdictCache Cache => _cache;

    /// <summary>Verifies an item ahead of ordering and caches the verdict. Unparsable items are left for execution to count.</summary>
    public void Precompute(ReadOnlyMemory<byte> item)
    {
        var key = ItemKey.Over(item);
        if (_cache.Contains(key))
        {
            return;
        }
        try
        {
            switch ((StructureKind)item.Span[0])
            {
                case StructureKind.SenderMessage:
                    var message = SenderMessageCodec.Decode(item);
                    var verdict = _senderCheck.Verify(message);
                    if (verdict == SignatureVerdict.UnknownSender)
                    {
                        // Depends on the enrolment when it ran, which an enrolment ordered before this item changes: left to execution.
                        break;
                    }
                    // Only an authentic message can reach the rules, so forged ones buy no scanning.
                    _cache.Put(key, verdict, verdict == SignatureVerdict.Valid && _prescan is not null ? _prescan.Prescan(message.Data) : default);
                    break;
                case StructureKind.AckRequest:
                    var ackVerdict = Check(AckRequestCodec.Decode(item));
                    if (ackVerdict != SignatureVerdict.UnknownSender)
                    {
                        _cache.Put(key, ackVerdict);
                    }
                    break;
                case StructureKind.ReceiverAck:
                    _cache.Put(key, Check(ReceiverAckCodec.Decode(item)));
                    break;
                default:
                    break;
            }
        }
        catch (MalformedEnvelopeException)
        {
            // Execution decodes again, counts it as malformed and charges the forwarding pre-SQ.
        }
    }

    /// <summary>The message's verdict and, when it was verified ahead, the rules' prescan of its payload.</summary>
    public SignatureVerdict Verify(SenderMessage message, out PayloadPrescan prescan) =>
        _cache.TryTake(ItemKey.Over(message.Encoded), out var v, out prescan) ? v : _senderCheck.Verify(message);

    public SignatureVerdict Verify(AckRequest request, ReadOnlyMemory<byte> encoded) => Cached(encoded, () => Check(request));

    public SignatureVerdict Verify(ReceiverAck ack, ReadOnlyMemory<byte> encoded) => Cached(encoded, () => Check(ack));

    private SignatureVerdict Cached(ReadOnlyMemory<byte> encoded, Func<SignatureVerdict> verify)
    {
        return _cache.TryTake(ItemKey.Over(encoded), out var v) ? v : verify();
    }

    private SignatureVerdict Check(AckRequest r)
    {
        if (!_keys.IsSender(r.Sender))
        {
            return SignatureVerdict.UnknownSender;
        }
        return _keys.VerifySender(r.Sender, TaggedHash.Concat(DomainTags.AckRequest, r.SignedRegion.Span), r.Signature.Span)
            ? SignatureVerdict.Valid : SignatureVerdict.BadSignature;
    }

    private SignatureVerdict Check(ReceiverAck a)
    {
        if (!_keys.IsReceiver(a.Receiver))
        {
            return SignatureVerdict.UnknownSender;
        }
        return _keys.VerifyReceiver(a.Receiver, TaggedHash.Concat(DomainTags.ReceiverAck, a.SignedRegion.Span), a.Signature.Span)
            ? SignatureVerdict.Valid : SignatureVerdict.BadSignature;
    }
}
