using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;
using SieveQ.Transport.Tls;

namespace SieveQ.Sdk;

/// <summary>
/// What a sender or receiver needs to know of the deployment it talks to, and nothing of how the
/// deployment runs: where the pre-SQs and replica-SQs listen, the enrolment whose public keys it pins,
/// where this party's private keys are, and the fixed routes when the replicas enforce those. A
/// deployment tool maps its own description onto this (the agent does it for a SieveQ deployment
/// directory); an application may also build it by hand.
/// </summary>
public sealed record SieveQClientConfiguration
{
    /// <summary>Replica-SQ faults tolerated: a message is acknowledged, and delivered, on f+1 matching replicas.</summary>
    public required int F { get; init; }

    /// <summary>The pre-SQs a sender sends through, by id (their gRPC endpoints).</summary>
    public required IReadOnlyDictionary<int, Uri> PreSqs { get; init; }

    /// <summary>The replica-SQs a receiver subscribes to, by id (their client API endpoints).</summary>
    public required IReadOnlyDictionary<int, Uri> Replicas { get; init; }

    /// <summary>
    /// The TLS key pin of every https:// pre-SQ in <see cref="PreSqs"/>, by id: the client connects with TLS 1.3 and
    /// refuses a server whose key is not the pinned one. An http:// endpoint has none (cleartext HTTP/2).
    /// </summary>
    public IReadOnlyDictionary<int, TlsPin> PreSqTlsPins { get; init; } = new Dictionary<int, TlsPin>();

    /// <summary>The TLS key pin of every https:// replica-SQ in <see cref="Replicas"/>, by id.</summary>
    public IReadOnlyDictionary<int, TlsPin> ReplicaTlsPins { get; init; } = new Dictionary<int, TlsPin>();

    /// <summary>
    /// The enrolment: every party's public keys. A client refuses to start unless its own signing key is
    /// the enrolled one, agrees its MAC keys with the enrolled keys of the pre-SQs and replicas, and a
    /// receiver keeps vote state only for enrolled senders.
    /// </summary>
    public required Enrolment Enrolment { get; init; }

    /// <summary>The MAC key epoch the deployment runs (the previous epoch's keys are accepted too).</summary>
    public uint MacEpoch { get; init; } = 1;

    /// <summary>
    /// This party's private keys, named <c>NAME-sign</c> and <c>NAME-agree</c> (<see cref="KeyName"/>; by default as
    /// <see cref="PartyKeyNames"/> says: sender-3-sign, sender-3-agree, ...): a <c>PemFileKeyStore</c> or, on Windows, a
    /// <c>CngKeyStore</c> of SieveQ.Sieve.Hosting.
    /// </summary>
    public required ISenderKeyStore Keys { get; init; }

    /// <summary>
    /// The name this party's keys have in <see cref="Keys"/>: <c>NAME-sign</c> and <c>NAME-agree</c>, as
    /// <c>sieveq enrol request --name NAME</c> makes them. Null: <c>sender-ID</c> or <c>receiver-ID</c> by the id the
    /// sender or receiver is created under. One name per party, so an application that is a sender and a receiver under
    /// keys of its own names gives each its configuration (<c>config with { KeyName = ... }</c>).
    /// </summary>
    public string? KeyName { get; init; }

    /// <summary>
    /// The fixed routes the replicas enforce, so a sender refuses at the call what they would drop; null when
    /// signed rule sets decide at the replicas (then only enrolment and the sieve's size limit are checked).
    /// </summary>
    public IReadOnlyList<Route>? Routes { get; init; }

    /// <summary>
    /// How long <c>ConnectAsync</c> waits for f+1 replica-SQs to agree on this party's enrolment before it gives up with
    /// <see cref="ConnectUnconfirmedException"/> (10 s by default; at most 10 minutes).
    /// </summary>
    public TimeSpan ConnectTimeout { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>The signing key's name in <see cref="Keys"/> for <paramref name="party"/> <paramref name="id"/>.</summary>
    internal string SigningKeyName(string party, int id) => KeyName is { } n ? $"{n}-sign" : PartyKeyNames.Signing(party, id);

    /// <summary>The key-agreement key's name in <see cref="Keys"/> for <paramref name="party"/> <paramref name="id"/>.</summary>
    internal string AgreementKeyName(string party, int id) => KeyName is { } n ? $"{n}-agree" : PartyKeyNames.Agreement(party, id);

    /// <exception cref="SieveQConfigurationException">A field is missing or out of range.</exception>
    public void Validate()
    {
        if (F < 0)
        {
            throw new SieveQConfigurationException($"f must be at least 0, not {F}");
        }
        if (PreSqs is null || PreSqs.Count == 0)
        {
            throw new SieveQConfigurationException("the configuration names no pre-SQ");
        }
        if (Replicas is null || Replicas.Count < 3 * F + 1)
        {
            throw new SieveQConfigurationException($"the configuration names {Replicas?.Count ?? 0} replica-SQs; f = {F} needs {3 * F + 1}");
        }
        if (Enrolment is null || Keys is null)
        {
            throw new SieveQConfigurationException("the configuration needs the enrolment and this party's key store");
        }
        if (KeyName is not null && Sieve.Envelope.EnrolmentProof.NameProblem(KeyName) is { } problem)
        {
            throw new SieveQConfigurationException($"key name '{KeyName}': {problem}");
        }
        if (ConnectTimeout <= TimeSpan.Zero || ConnectTimeout > TimeSpan.FromMinutes(10))
        {
            throw new SieveQConfigurationException($"the connect time-out must be above 0 and at most 10 minutes, not {ConnectTimeout}");
        }
        CheckPins("pre-SQ", PreSqs, PreSqTlsPins);
        CheckPins("replica-SQ", Replicas, ReplicaTlsPins);
    }

    private static void CheckPins(string kind, IReadOnlyDictionary<int, Uri> endpoints, IReadOnlyDictionary<int, TlsPin>? pins)
    {
        if (pins is null)
        {
            throw new SieveQConfigurationException($"the {kind} TLS pins are null (an empty map when every {kind} is http://)");
        }
        foreach (var (id, url) in endpoints)
        {
            var https = url.Scheme == Uri.UriSchemeHttps;
            if (!https && url.Scheme != Uri.UriSchemeHttp)
            {
                throw new SieveQConfigurationException($"{kind} {id}: {url} is neither https:// nor http://");
            }
            if (https != pins.ContainsKey(id))
            {
                throw new SieveQConfigurationException(https
                    ? $"{kind} {id}: {url} is https:// but no TLS pin is given for it"
                    : $"{kind} {id}: {url} is cleartext http:// but a TLS pin is given for it; use https://");
            }
        }
    }
}

/// <summary>The client configuration cannot work: a missing key, a party that is not enrolled, a key that is not the enrolled one.</summary>
public sealed class SieveQConfigurationException : Exception
{
    /// <summary>A configuration error without a message.</summary>
    public SieveQConfigurationException()
    {
    }

    /// <summary>A configuration error saying what is wrong.</summary>
    public SieveQConfigurationException(string message)
        : base(message)
    {
    }

    /// <summary>A configuration error caused by <paramref name="inner"/>.</summary>
    public SieveQConfigurationException(string message, Exception inner)
        : base(message, inner)
    {
    }
}
