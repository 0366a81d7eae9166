namespace SieveQ.Controller.Orchestration;

/// <summary>
/// At most <see cref="Max"/> automatic replacements per component within <see cref="Window"/>. A pre-SQ replaced and
/// suspected again and again is not healed by one more replacement (a bad configuration, a key the attacker holds, a
/// flaw the fresh process has too): beyond the bound the controller stops acting on that component and raises an
/// alarm for a person. Thread-safe.
/// </summary>
public sealed class ReplacementBudget
{
    private readonly TimeProvider _time;
    private readonly Lock _lock = new();
    private readonly Dictionary<ComponentRef, Queue<long>> _taken = [];

    public ReplacementBudget(int max = 3, TimeSpan? window = null, TimeProvider? time = null)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(max);
        Max = max;
        Window = window ?? TimeSpan.FromMinutes(10);
        _time = time ?? TimeProvider.System;
    }

    public int Max { get; }
    public TimeSpan Window { get; }

    /// <summary>Takes one replacement of <paramref name="component"/> if the bound allows it now.</summary>
    public bool TryTake(ComponentRef component)
    {
        var now = _time.GetUtcNow().ToUnixTimeMilliseconds();
        var window = (long)Window.TotalMilliseconds;
        lock (_lock)
        {
            if (!_taken.TryGetValue(component, out var times))
            {
                times = new Queue<long>();
                _taken.Add(component, times);
            }
            while (times.Count > 0 && now - times.Peek() >= window)
            {
                times.Dequeue();
            }
            if (times.Count >= Max)
            {
                return false;
            }
            times.Enqueue(now);
            return true;
        }
    }
}
