namespace SieveQ.Sieve.Sender.Outbox;

/// <summary>What one outbox record says.</summary>
public enum OutboxRecordKind : byte
{
    /// <summary>A message SendAsync accepted: its number, receiver and DATA, which a restart sends again unchanged.</summary>
    Message = 1,

    /// <summary>f+1 replica-SQs acknowledged every number up to <see cref="OutboxRecord.Seq"/>: a restart need not resend those.</summary>
    Acknowledged = 2,
}

/// <summary>One whole, checked record of an outbox file and where it lies in the file.</summary>
public readonly record struct OutboxRecord(OutboxRecordKind Kind, long Seq, int Receiver, ReadOnlyMemory<byte> Data, long Offset, int Length);
