namespace SieveQ.Sdk.Receiver;

/// <summary>Something for the voter: a replica's output batch or a replica's answer to a body fetch.</summary>
internal readonly record struct ReceiverInput(bool IsFetchResponse, int Replica, ReadOnlyMemory<byte> Bytes);
