namespace SieveQ.Sieve.Sender;

/// <summary>Bytes the host must send to one pre-SQ.</summary>
public readonly record struct OutgoingFrame(int PreSq, byte[] Frame);
