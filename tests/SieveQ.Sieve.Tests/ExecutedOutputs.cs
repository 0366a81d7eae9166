using System.Runtime.CompilerServices;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Sieve.Replica;

namespace SieveQ.Sieve.Tests;

/// <summary>
/// For tests that look at a sieve's outputs after several executions: keeps what each execution returned,
/// per sieve, until the test takes it, as a host's output queue would.
/// </summary>
internal static class ExecutedOutputs
{
    private static readonly ConditionalWeakTable<SieveReplicaApplication, List<OutboxContents>> Kept = [];

    /// <summary>Executes, keeps the outputs, returns the replies.</summary>
    public static IReadOnlyList<byte[]> ExecuteKeepingOutputs(this SieveReplicaApplication app, DecisionContext context, IReadOnlyList<ClientRequest> requests)
    {
        var outcome = app.Execute(context, requests);
        if (outcome.Outputs is not null)
        {
            Kept.GetOrCreateValue(app).Add(OutboxContents.Of(outcome));
        }
        return outcome.Replies;
    }

    /// <summary>Everything kept since the last call, in execution order.</summary>
    public static OutboxContents TakeOutputs(this SieveReplicaApplication app)
    {
        if (!Kept.TryGetValue(app, out var kept) || kept.Count == 0)
        {
            return OutboxContents.Empty;
        }
        var all = new OutboxContents([.. kept.SelectMany(c => c.Batches)], [.. kept.SelectMany(c => c.AckResponses)], [.. kept.SelectMany(c => c.Notices)]);
        kept.Clear();
        return all;
    }
}
