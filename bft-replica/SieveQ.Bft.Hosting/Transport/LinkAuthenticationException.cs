namespace SieveQ.Bft.Hosting.Transport;

/// <summary>A handshake or frame failed authentication: wrong key, unknown peer, tampered or replayed frame.</summary>
public sealed class LinkAuthenticationException : Exception
{
    public LinkAuthenticationException() { }
    public LinkAuthenticationException(string message) : base(message) { }
    public LinkAuthenticationException(string message, Exception inner) : base(message, inner) { }
}
