using System.Text;

namespace SieveQ.Sieve.Envelope;

/// <summary>
/// Domain-separation tags: every signed, MACed or hashed byte string starts with the tag of the
/// structure it belongs to, so a signature or MAC made for one structure can never be replayed as
/// another. Tags are ASCII and end with a version; a layout change gets a new tag.
/// </summary>
public static class DomainTags
{
    public static readonly byte[] SenderMessage = Ascii("SIEVEQ/SENDER-MSG/v1");
    public static readonly byte[] MerkleLeaf = Ascii("SIEVEQ/MERKLE-LEAF/v1");
    public static readonly byte[] MerkleNode = Ascii("SIEVEQ/MERKLE-NODE/v1");
    public static readonly byte[] BatchRoot = Ascii("SIEVEQ/SENDER-BATCH-ROOT/v1");
    public static readonly byte[] SenderFrameMac = Ascii("SIEVEQ/SENDER-FRAME-MAC/v1");
    public static readonly byte[] AckRequest = Ascii("SIEVEQ/ACKREQ/v1");
    public static readonly byte[] AckResponse = Ascii("SIEVEQ/ACKRES/v2");
    public static readonly byte[] ReceiverAck = Ascii("SIEVEQ/RECEIVER-ACK/v1");
    public static readonly byte[] ReplicaOutput = Ascii("SIEVEQ/REPLICA-OUTPUT/v1");
    public static readonly byte[] BodyFetchRequest = Ascii("SIEVEQ/BODY-FETCH-REQ/v1");
    public static readonly byte[] BodyFetchResponse = Ascii("SIEVEQ/BODY-FETCH-RES/v1");
    public static readonly byte[] DataDigest = Ascii("SIEVEQ/DATA-DIGEST/v1");
    public static readonly byte[] MacKeySenderPreSq = Ascii("SIEVEQ/MAC-KEY/SENDER-PRESQ/v1");
    public static readonly byte[] MacKeyReplicaReceiver = Ascii("SIEVEQ/MAC-KEY/REPLICA-RECEIVER/v1");
    public static readonly byte[] MacKeyReplicaSender = Ascii("SIEVEQ/MAC-KEY/REPLICA-SENDER/v1");
    public static readonly byte[] ReceiverSubscription = Ascii("SIEVEQ/RECEIVER-SUBSCRIBE/v1");
    public static readonly byte[] PreSqSubscription = Ascii("SIEVEQ/PRESQ-SUBSCRIBE/v1");
    public static readonly byte[] ReplicaSnapshot = Ascii("SIEVEQ/REPLICA-SNAPSHOT/v2");
    public static readonly byte[] RuleSetCommand = Ascii("SIEVEQ/RULESET-COMMAND/v1");
    public static readonly byte[] AdminCommand = Ascii("SIEVEQ/ADMIN-COMMAND/v1");
    public static readonly byte[] AdminEnrolment = Ascii("SIEVEQ/ADMIN-ENROLMENT/v1");
    public static readonly byte[] AdminRoute = Ascii("SIEVEQ/ADMIN-ROUTE/v1");
    public static readonly byte[] EnrolRequest = Ascii("SIEVEQ/ENROL-REQUEST/v1");
    public static readonly byte[] IdLease = Ascii("SIEVEQ/ID-LEASE/v1");

    private static byte[] Ascii(string s) => Encoding.ASCII.GetBytes(s);
}
