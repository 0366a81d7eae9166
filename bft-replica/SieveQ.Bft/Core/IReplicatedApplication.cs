using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

/// <summary>Agreed context of one decided batch: its instance and the leader timestamp all replicas checked.</summary>
public readonly record struct DecisionContext(long ConsensusId, long Timestamp);

/// <summary>
/// The replicated state machine on top of the ordering. Must be deterministic: same batches in,
/// same results and snapshot bytes out, on every replica.
/// </summary>
public interface IReplicatedApplication
{
    /// <summary>
    /// Executes requests never executed before, in order; returns one reply per request and whatever else
    /// the execution produced for the world. The application sends nothing itself: the core hands its
    /// outputs to the host with the decision's other outputs (see <see cref="ApplicationOutputs"/>).
    /// </summary>
    ExecutionOutcome Execute(DecisionContext context, IReadOnlyList<ClientRequest> requests);

    byte[] TakeSnapshot();

    void RestoreSnapshot(ReadOnlySpan<byte> snapshot);
}

/// <summary>
/// Checks a request before it may be proposed or accepted in a proposal (signatures, formats).
/// Hosts call it off the ordering thread; only requests it passed reach the core.
/// </summary>
public interface IRequestVerifier
{
    bool Verify(ClientRequest request);
}

/// <summary>For applications with no check of their own (the benchmark): the client's proof is checked whatever this says.</summary>
public sealed class AcceptAllRequestVerifier : IRequestVerifier
{
    public static readonly AcceptAllRequestVerifier Instance = new();
    public bool Verify(ClientRequest request) => true;
}

/// <summary>Signs the structures that must be shown to third parties (WRITE, STOPDATA) with this replica's key.</summary>
public interface IProofSigner
{
    byte[] Sign(ReadOnlySpan<byte> data);
}

public interface IProofVerifier
{
    bool Verify(int replica, ReadOnlySpan<byte> data, ReadOnlySpan<byte> signature);
}
