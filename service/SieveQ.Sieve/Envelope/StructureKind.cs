namespace SieveQ.Sieve.Envelope;

/// <summary>
/// First byte of every top-level structure on the wire. Values are part of the format and never
/// reused; a decoder refuses a structure whose kind byte is not the one it expects.
/// </summary>
public enum StructureKind : byte
{
    SenderMessage = 0x01,
    AckRequest = 0x02,
    LoadWarning = 0x03,
    ReceiverAck = 0x04,
    RuleSetCommand = 0x05,
    AdminCommand = 0x06,
    EnrolmentQuery = 0x07,
    SenderFrame = 0x08,
    IdLease = 0x09,
    OrderingRequest = 0x10,
    ExecuteResult = 0x11,
    RuleSetResult = 0x12,
    AdminCommandResult = 0x13,
    EnrolmentView = 0x14,
    IdLeaseResult = 0x15,
    AckResponse = 0x18,
    ReplicaOutput = 0x20,
    BodyFetchRequest = 0x21,
    BodyFetchResponse = 0x22,
    ReceiverSubscription = 0x30,
    PreSqSubscription = 0x31,
}
