namespace SieveQ.Sieve.Envelope;

/// <summary>
/// The one exception every SieveQ decoder throws for bad input. Callers on the network edge catch
/// exactly this type and drop the input; any other exception escaping a decoder is a bug.
/// </summary>
public sealed class MalformedEnvelopeException : Exception
{
    public MalformedEnvelopeException()
    {
    }

    public MalformedEnvelopeException(string message) : base(message)
    {
    }

    public MalformedEnvelopeException(string message, Exception inner) : base(message, inner)
    {
    }
}
