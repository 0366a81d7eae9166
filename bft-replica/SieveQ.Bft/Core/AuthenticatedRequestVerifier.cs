using SieveQ.Bft.Codec;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

/// <summary>Checks a client's signature (a request's <see cref="ClientRequest.Proof"/>) against the key the cluster pins for it.</summary>
public interface IClientProofVerifier
{
    bool Verify(int client, ReadOnlySpan<byte> data, ReadOnlySpan<byte> proof);
}

public enum RequestVerdict
{
    Valid,
    /// <summary>No proof, a proof that does not verify, or a sender id that is not a client: not made by the client it names.</summary>
    BadProof,
    /// <summary>Made by its client, refused by the application's own check.</summary>
    Refused,
}

/// <summary>
/// The request check every host runs on every path a request can take (its client's link, FORWARD, STOP,
/// PROPOSE, SYNC): the client's proof first, then the application's check. Its verdict depends on the
/// request's bytes alone, so every correct replica reaches the same one whoever handed it the request; a
/// verdict that depended on how a replica learnt of a request would let a Byzantine client or leader split
/// the correct replicas over one proposal. The simulator runs this class too, with a stand-in for the
/// signatures.
/// </summary>
public sealed class AuthenticatedRequestVerifier(IClientProofVerifier proofs, int replicaCount, IRequestVerifier application) : IRequestVerifier
{
    public RequestVerdict Check(ClientRequest request)
    {
        ArgumentNullException.ThrowIfNull(request);
        return Check(request, SigningBytes.ForRequest(request.From, request.Sequence, request.Payload));
    }

    /// <param name="signingBytes"><see cref="SigningBytes.ForRequest"/> of the request, when the caller has them already.</param>
    public RequestVerdict Check(ClientRequest request, ReadOnlySpan<byte> signingBytes)
    {
        ArgumentNullException.ThrowIfNull(request);
        if (request.From < replicaCount || request.Proof.Length == 0 || !proofs.Verify(request.From, signingBytes, request.Proof))
        {
            return RequestVerdict.BadProof;
        }
        return application.Verify(request) ? RequestVerdict.Valid : RequestVerdict.Refused;
    }

    public bool Verify(ClientRequest request) => Check(request) == RequestVerdict.Valid;

    /// <summary>Every client request a message carries, on whichever path: each must pass before the message reaches the core.</summary>
    public static IReadOnlyList<ClientRequest> RequestsIn(BftMessage message) => message switch
    {
        ClientRequest r => [r],
        Forward f => f.Requests,
        Stop s => s.TimedOut,
        Propose p => p.Value.Requests,
        Sync s => [.. s.Value?.Requests ?? [], .. s.PriorValue?.Requests ?? []],
        _ => [],
    };
}
