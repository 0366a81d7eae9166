namespace SieveQ.Sieve.Keys;

/// <summary>
/// The names under which a party's private keys are kept in a key store: <c>{party}-{id}-sign</c> and
/// <c>{party}-{id}-agree</c>. One convention for the deployment tools that create the keys and the
/// clients (SDK, agent) that open them.
/// </summary>
public static class PartyKeyNames
{
    public const string Sender = "sender";
    public const string Receiver = "receiver";
    public const string PreSq = "presq";
    public const string Replica = "replica-sq";

    public static string Signing(string party, int id) => $"{party}-{id}-sign";

    public static string Agreement(string party, int id) => $"{party}-{id}-agree";
}
