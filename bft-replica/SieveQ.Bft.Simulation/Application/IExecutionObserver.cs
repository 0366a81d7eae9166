using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Application;

/// <summary>What the ledger tells the checker about each replica's execution.</summary>
internal interface IExecutionObserver
{
    void OnExecuted(int replica, DecisionContext context, ClientRequest request, Digest headAfter);

    void OnBatchExecuted(int replica, DecisionContext context, Digest headAfter);

    void OnRestored(int replica, long lastConsensusId, Digest head);

    void OnLedgerFault(int replica, string fault);
}
