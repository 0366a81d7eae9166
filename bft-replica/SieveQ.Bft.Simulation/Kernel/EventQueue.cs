namespace SieveQ.Bft.Simulation.Kernel;

/// <summary>
/// Pending events ordered by (time, insertion counter): two events at the same millisecond run in
/// the order they were scheduled, so the run never depends on the heap's internal layout.
/// </summary>
internal sealed class EventQueue
{
    private readonly PriorityQueue<SimEvent, (long Time, long Order)> _heap = new();
    private long _order;

    public int Count => _heap.Count;

    public void Schedule(long time, SimEvent e) => _heap.Enqueue(e, (time, _order++));

    public bool TryNext(out long time, out SimEvent e)
    {
        if (_heap.TryDequeue(out var ev, out var key))
        {
            time = key.Time;
            e = ev;
            return true;
        }
        time = 0;
        e = null!;
        return false;
    }
}
