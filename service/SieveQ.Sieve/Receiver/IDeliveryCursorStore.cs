using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Receiver;

/// <summary>
/// Durable per-sender delivered-up-to cursors of one receiver (route sequence numbers). Save must be
/// durable when it returns; a restarted post-SQ resumes after the saved cursors, so nothing it
/// committed is delivered again.
/// </summary>
public interface IDeliveryCursorStore
{
    IReadOnlyList<DeliveredCursor> Load();

    void Save(IReadOnlyList<DeliveredCursor> cursors);
}

public sealed class InMemoryDeliveryCursorStore : IDeliveryCursorStore
{
    private IReadOnlyList<DeliveredCursor> _saved = [];

    public IReadOnlyList<DeliveredCursor> Load() => _saved;

    public void Save(IReadOnlyList<DeliveredCursor> cursors) => _saved = cursors.ToArray();
}
