namespace SieveQ.Bft.Core;

/// <summary>
/// What one execution gives back, in the manner of the committed entries etcd's raft hands out in its
/// <c>Ready</c>: the replies the core sends to clients, and the application's other outputs for this
/// decision, which the core passes on untouched and the host hands to the application's sink.
/// </summary>
/// <param name="Replies">One result per executed request, in request order.</param>
/// <param name="Outputs">Null when the execution produced nothing besides its replies.</param>
public sealed record ExecutionOutcome(IReadOnlyList<byte[]> Replies, IExecutionOutputs? Outputs = null);

/// <summary>
/// An application's own outputs of one execution (messages for its subscribers, notices). Opaque to the
/// ordering: only the application's <see cref="IExecutionOutputSink"/> knows the concrete type.
/// </summary>
#pragma warning disable CA1040 // a marker: the ordering carries these without looking inside
public interface IExecutionOutputs;
#pragma warning restore CA1040
