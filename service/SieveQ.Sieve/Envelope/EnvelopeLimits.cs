namespace SieveQ.Sieve.Envelope;

/// <summary>
/// Upper bounds every decoder enforces before it allocates, so a hostile length prefix can never
/// make a parser reserve more memory than a legitimate structure could need.
/// </summary>
public static class EnvelopeLimits
{
    /// <summary>Largest application DATA in one sender message (1 MiB).</summary>
    public const int MaxDataBytes = 1 << 20;

    /// <summary>Largest number of items in one batch structure (ordering request, output batch, fetch).</summary>
    public const int MaxItems = 65_536;

    /// <summary>Deepest Merkle inclusion path: 2^32 leaves is far beyond any batch a sender builds.</summary>
    public const int MaxMerkleDepth = 32;

    /// <summary>ECDSA P-256 signatures travel in IEEE P1363 form: r || s, 32 bytes each.</summary>
    public const int SignatureBytes = 64;

    /// <summary>SHA-256 output and HMAC-SHA256 tag length.</summary>
    public const int HashBytes = 32;

    /// <summary>Largest body of a sender frame: a sender message (DATA, header, Merkle path, signature) or an ACKREQ.</summary>
    public const int MaxSenderFrameBodyBytes = MaxDataBytes + 4096;

    /// <summary>An ordering request's header (kind, origin, item count) and each item's length prefix.</summary>
    public const int OrderingRequestHeaderBytes = 9, OrderingItemPrefixBytes = 4;

    /// <summary>Largest rule-set command: header, version fields, the document, its signature file and the command signature.</summary>
    public const int MaxRuleSetCommandBytes = 18 + 8 + MaxRuleSetDocumentBytes + MaxRuleSetSignatureFileBytes + SignatureBytes;

    /// <summary>Largest single item of an ordering request: a sender frame's body or a rule-set command.</summary>
    public const int MaxOrderingItemBytes = MaxSenderFrameBodyBytes > MaxRuleSetCommandBytes ? MaxSenderFrameBodyBytes : MaxRuleSetCommandBytes;

    /// <summary>
    /// What an ordering request needs to carry the largest item alone. A deployment whose ordering cluster orders
    /// less (<see cref="SieveQ.Bft.Core.ReplicaConfig.MaxRequestPayloadBytes"/>) is refused at start: everything the
    /// edge accepts must pass every inner layer, or one message of the largest size halts a pre-SQ.
    /// </summary>
    public const int MinOrderingPayloadBytes = OrderingRequestHeaderBytes + OrderingItemPrefixBytes + MaxOrderingItemBytes;

    /// <summary>Largest whole ordering request payload: what the ordering layer's frames carry.</summary>
    public const int MaxOrderingPayloadBytes = SieveQ.Bft.Codec.WireLimits.MaxPayloadBytes;

    /// <summary>Largest number of per-sender entries in one receiver acknowledgement.</summary>
    public const int MaxAckEntries = 65_536;

    /// <summary>
    /// Largest rule-set document a rule-set command may carry (4 MiB). Well under the ordering payload
    /// limit so that a push never competes with a full batch for it, and far above any real rule set
    /// (the 1,000-pattern sample is 25 KB); the rules library itself accepts up to 16 MiB from a file.
    /// </summary>
    public const int MaxRuleSetDocumentBytes = 4 << 20;

    /// <summary>Largest signature file (FILE.sig JSON) carried next to a rule-set document.</summary>
    public const int MaxRuleSetSignatureFileBytes = 4096;

    /// <summary>Most rejected messages one ACKRES reports (the replicas keep at most this many unreported per sender).</summary>
    public const int MaxAckRejections = 64;

    /// <summary>Longest rule text of a rejection in an ACKRES, in UTF-8 bytes (longer texts are cut at a character boundary).</summary>
    public const int MaxRejectionRuleBytes = 128;

    /// <summary>Largest ACKRES: the fixed fields, the rejection count and every rejection at its largest.</summary>
    public const int MaxAckResponseBytes = 1 + 4 + 4 + 4 + 8 + 4 + 8 + 8 + 4 + MaxAckRejections * (8 + 1 + 4 + MaxRejectionRuleBytes) + 4 + HashBytes;

    /// <summary>Longest reason text in a rule-set result, in UTF-8 bytes.</summary>
    public const int MaxReasonBytes = 1024;
}
