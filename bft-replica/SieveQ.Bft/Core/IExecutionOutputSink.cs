namespace SieveQ.Bft.Core;

/// <summary>
/// Where a host puts the <see cref="ApplicationOutputs"/> of its core, on the core's thread and in decision
/// order. It must not block: the next decision waits behind it.
/// </summary>
public interface IExecutionOutputSink
{
    void Accept(long consensusId, IExecutionOutputs outputs);
}
