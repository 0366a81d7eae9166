namespace SieveQ.Sieve.Sender.Outbox;

/// <summary>
/// A record inside an outbox file (not its torn tail) fails its check: the file was damaged or
/// tampered with. Refused rather than cut there, since the whole records after it are accepted messages.
/// </summary>
public sealed class OutboxCorruptException : Exception
{
    public OutboxCorruptException(string message) : base(message) { }

    public OutboxCorruptException(string message, Exception inner) : base(message, inner) { }

    public OutboxCorruptException() { }
}
