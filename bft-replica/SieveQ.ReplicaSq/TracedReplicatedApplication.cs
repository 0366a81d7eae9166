using System.Diagnostics;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;

namespace SieveQ.ReplicaSq;

/// <summary>
/// The sieve as the ordering host sees it, with one span per decided batch it executes ("replica-sq execute").
/// The span lives on the core thread for exactly the execution; with no listener (no OTLP export configured)
/// starting it is a null check.
/// </summary>
internal sealed class TracedReplicatedApplication(IReplicatedApplication inner, int replica) : IReplicatedApplication
{
    public const string SourceName = "SieveQ.ReplicaSq";

    private static readonly ActivitySource Source = new(SourceName, "1.0");

    public ExecutionOutcome Execute(DecisionContext context, IReadOnlyList<ClientRequest> requests)
    {
        using var span = Source.StartActivity("replica-sq execute", ActivityKind.Internal);
        if (span is not null)
        {
            span.SetTag("sieveq.replica", replica);
            span.SetTag("sieveq.consensus_id", context.ConsensusId);
            span.SetTag("sieveq.requests", requests.Count);
        }
        return inner.Execute(context, requests);
    }

    public byte[] TakeSnapshot() => inner.TakeSnapshot();

    public void RestoreSnapshot(ReadOnlySpan<byte> snapshot) => inner.RestoreSnapshot(snapshot);
}
