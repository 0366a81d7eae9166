namespace SieveQ.Sieve.Keys;

/// <summary>A key store refused an operation: unsafe file permissions, a bad name, a missing key.</summary>
public sealed class KeyStoreException : Exception
{
    public KeyStoreException()
    {
    }

    public KeyStoreException(string message) : base(message)
    {
    }

    public KeyStoreException(string message, Exception inner) : base(message, inner)
    {
    }
}
