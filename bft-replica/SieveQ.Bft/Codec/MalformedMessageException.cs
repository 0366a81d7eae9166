namespace SieveQ.Bft.Codec;

/// <summary>Thrown by the decoder for any frame that is not a well-formed message. Callers count and drop.</summary>
public sealed class MalformedMessageException : Exception
{
    public MalformedMessageException() { }
    public MalformedMessageException(string message) : base(message) { }
    public MalformedMessageException(string message, Exception inner) : base(message, inner) { }
}
