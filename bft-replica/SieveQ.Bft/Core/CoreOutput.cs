using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

/// <summary>What a step of the core asks its host to do. Order matters: persist before sending what follows.</summary>
public abstract record CoreOutput;

/// <summary>Send to one node: a replica id below n, or a client id.</summary>
public sealed record SendTo(int To, BftMessage Message) : CoreOutput;

/// <summary>Send to every other replica.</summary>
public sealed record SendToReplicas(BftMessage Message) : CoreOutput;

/// <summary>Informational: an instance was decided and executed (<paramref name="Executed"/> new requests).</summary>
public sealed record Decided(long ConsensusId, Batch Value, int Executed) : CoreOutput;

/// <summary>
/// The application's own outputs of instance <paramref name="ConsensusId"/>, for the host's
/// <see cref="IExecutionOutputSink"/>. Emitted right after the decision's <see cref="Persist"/>, which gates
/// nothing (see <see cref="DecisionRecord"/>), so the host may act on them at once. Unlike every other
/// output they are also emitted while the core replays its log at start: the application state is rebuilt
/// by re-executing, and what those executions produce (re-sent to subscribers, deduplicated there) is what
/// the restarted replica owes them, as raft re-applies committed entries after a restart.
/// </summary>
public sealed record ApplicationOutputs(long ConsensusId, IExecutionOutputs Outputs) : CoreOutput;

/// <summary>Must reach stable storage before any later output is acted on (only when durability is on).</summary>
public sealed record Persist(DurableRecord Record) : CoreOutput;

/// <summary>Records for instances at or below this one are no longer needed for recovery.</summary>
public sealed record TruncateDurableLog(long UpToConsensusId) : CoreOutput;
