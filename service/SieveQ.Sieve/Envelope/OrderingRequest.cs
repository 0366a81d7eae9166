namespace SieveQ.Sieve.Envelope;

/// <summary>
/// The payload of one ordering request (the ordering layer's ClientRequest): the forwarding
/// pre-SQ's id and a batch of items, each exactly the bytes that arrived from the outside (a sender
/// message, an ACKREQ) or that the pre-SQ produced (a WARNREQ), a receiver acknowledgement, or an administrator's rule-set
/// or administrator command, an enrolment query or an id lease request (each of the last four travels alone in its request).
/// Items are decoded one by one at execution, so one bad item does not hide the others.
/// </summary>
public sealed record OrderingRequest(int Origin, IReadOnlyList<ReadOnlyMemory<byte>> Items);

/// <summary>Layout: <c>u8 kind=0x10 | u32 origin | u32 count | count x (u32 len | item)</c>; every item starts with its kind byte.</summary>
public static class OrderingRequestCodec
{
    public static byte[] Encode(int origin, IReadOnlyList<ReadOnlyMemory<byte>> items)
    {
        ArgumentNullException.ThrowIfNull(items);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(items.Count, EnvelopeLimits.MaxItems);
        var size = 9;
        foreach (var i in items)
        {
            size += 4 + i.Length;
        }
        using var w = new CanonicalWriter(size);
        w.U8((byte)StructureKind.OrderingRequest);
        w.Id(origin);
        w.Id(items.Count);
        foreach (var i in items)
        {
            if (i.Length == 0 || !IsItemKind(i.Span[0]))
            {
                throw new ArgumentException("ordering items must be sender messages, ACKREQs, WARNREQs, receiver acks, rule-set commands, administrator commands, enrolment queries or id leases", nameof(items));
            }
            w.Bytes(i.Span);
        }
        return w.ToArray();
    }

    public static OrderingRequest Decode(ReadOnlyMemory<byte> bytes)
    {
        if (bytes.Length > EnvelopeLimits.MaxOrderingPayloadBytes)
        {
            throw new MalformedEnvelopeException($"ordering request of {bytes.Length} bytes above limit");
        }
        var r = new CanonicalReader(bytes.Span);
        r.Kind(StructureKind.OrderingRequest);
        var origin = r.Id("origin");
        var n = r.Count(EnvelopeLimits.MaxItems, "item count");
        if (r.Remaining < (long)n * 5)
        {
            throw new MalformedEnvelopeException($"item count {n} exceeds the bytes present");
        }
        var items = new ReadOnlyMemory<byte>[n];
        for (var i = 0; i < n; i++)
        {
            var len = r.Count(EnvelopeLimits.MaxOrderingPayloadBytes, "item length");
            var at = r.Position;
            r.Take(len, "item");
            if (len == 0 || !IsItemKind(bytes.Span[at]))
            {
                throw new MalformedEnvelopeException($"item {i} has no valid kind byte");
            }
            items[i] = bytes.Slice(at, len);
        }
        r.End("ordering request");
        return new OrderingRequest(origin, items);
    }

    private static bool IsItemKind(byte b) => (StructureKind)b is StructureKind.SenderMessage or StructureKind.AckRequest
        or StructureKind.LoadWarning or StructureKind.ReceiverAck or StructureKind.RuleSetCommand or StructureKind.AdminCommand
        or StructureKind.EnrolmentQuery or StructureKind.IdLease;
}
