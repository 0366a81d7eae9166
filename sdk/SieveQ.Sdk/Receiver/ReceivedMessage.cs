namespace SieveQ.Sdk.Receiver;

/// <summary>
/// A message f+1 replica-SQs vouched for. <see cref="RouteSeq"/> numbers the (sender, receiver)
/// route without gaps and is what delivery order and commits follow; <see cref="SenderSeq"/> is the
/// sender's own number (with gaps: the sender also writes to others).
/// </summary>
public sealed record ReceivedMessage(int Sender, long SenderSeq, long RouteSeq, ReadOnlyMemory<byte> Data);
