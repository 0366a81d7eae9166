namespace SieveQ.Sieve.Keys;

/// <summary>The pairs of parties that share a MAC key; each has its own HKDF tag.</summary>
public enum MacChannel
{
    /// <summary>Sender-SQ to pre-SQ (stage (c)). First id: sender; second: pre-SQ.</summary>
    SenderPreSq,

    /// <summary>Replica-SQ to post-SQ (output batches, body fetches). First id: replica; second: receiver.</summary>
    ReplicaReceiver,

    /// <summary>Replica-SQ to sender-SQ (ACKRES). First id: replica; second: sender.</summary>
    ReplicaSender,
}
