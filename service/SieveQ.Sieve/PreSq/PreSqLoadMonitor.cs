using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.PreSq;

/// <summary>
/// The pre-SQ's view of its own load (paper 4.4.2): frames taken over the last second (a sliding window of ten
/// 100 ms slots) against the frames per second it can take. From <c>warnAtPermille</c> of capacity it produces a
/// WARNREQ for the replicas (through the ordering, like any other item), at most once per <c>minWarnIntervalMs</c>.
/// <para>
/// A rate over a whole second, not an average of the last arrivals' intervals: senders retransmit a lost stretch
/// in one burst, and a few hundred frames back to back read as many times capacity to an average over 64
/// intervals. Each such warning made the pre-SQ unhealthy at the replicas for ten seconds; with one pre-SQ dropping
/// every message, the retransmissions through the other kept it warned, and the replicas moved the senders onto
/// the dropping one and kept them there (docs/attacks.md, dropping-presq).
/// </para>
/// </summary>
public sealed class PreSqLoadMonitor
{
    private const int Slots = 10;
    private const long SlotUs = 100_000;

    private readonly int _preSq;
    private readonly double _capacityPerSecond;
    private readonly int _warnAtPermille;
    private readonly long _minWarnIntervalUs;
    private readonly long[] _counts = new long[Slots];
    private long _slot = long.MinValue;
    private long _inWindow;
    private long _lastWarnUs = long.MinValue / 2;

    /// <param name="capacityPerSecond">Frames per second this pre-SQ can take (measured or configured).</param>
    /// <param name="warnAtPermille">Load (thousandths of capacity) from which to warn.</param>
    public PreSqLoadMonitor(int preSq, double capacityPerSecond, int warnAtPermille = 800, long minWarnIntervalMs = 1000)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(capacityPerSecond, 0);
        ArgumentOutOfRangeException.ThrowIfNegative(minWarnIntervalMs);
        _preSq = preSq;
        _capacityPerSecond = capacityPerSecond;
        _warnAtPermille = warnAtPermille;
        _minWarnIntervalUs = minWarnIntervalMs * 1000;
    }

    /// <summary>Frames taken over the last second, in thousandths of capacity, as of the last arrival.</summary>
    public int LoadPermille => (int)Math.Min(100_000, _inWindow * 1000 / _capacityPerSecond);

    /// <summary>Records an arrival; returns the encoded WARNREQ item when one is due.</summary>
    public byte[]? OnArrival(long nowUs)
    {
        Advance(Math.Max(nowUs, 0) / SlotUs);
        _counts[_slot % Slots]++;
        _inWindow++;
        var load = LoadPermille;
        if (load >= _warnAtPermille && nowUs - _lastWarnUs >= _minWarnIntervalUs)
        {
            _lastWarnUs = nowUs;
            return LoadWarningCodec.Encode(new LoadWarning(_preSq, load));
        }
        return null;
    }

    /// <summary>Moves the window to <paramref name="slot"/>, emptying the slots it passed; a clock step back keeps the current slot.</summary>
    private void Advance(long slot)
    {
        if (slot <= _slot)
        {
            return;
        }
        if (_slot == long.MinValue || slot - _slot >= Slots)
        {
            Array.Clear(_counts);
            _inWindow = 0;
        }
        else
        {
            for (var s = _slot + 1; s <= slot; s++)
            {
                _inWindow -= _counts[s % Slots];
                _counts[s % Slots] = 0;
            }
        }
        _slot = slot;
    }
}
