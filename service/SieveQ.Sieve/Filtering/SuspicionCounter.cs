using SieveQ.Sieve.Envelope;

namespace SieveQ.Sieve.Filtering;

/// <summary>How evidence weighs and fades, and when a party is quarantined (paper 4.4.1).</summary>
public sealed record SuspicionPolicy(int QuarantineAt = 100, int ReleaseBelow = 50, int DecayPerSecond = 5)
{
    public static readonly SuspicionPolicy Default = new();
}

/// <summary>
/// Evidence of misbehaviour against one sender or pre-SQ. Each piece of evidence adds its weight;
/// the counter decays linearly with time (agreed time at the replicas). At the quarantine threshold
/// the party is quarantined; it is released once the counter decays below the release threshold, so a
/// party that was briefly faulty (or framed) regains access, one that keeps misbehaving does not.
/// Values are integer milli-points so that replicas agree to the byte.
/// </summary>
public sealed class SuspicionCounter
{
    private long _milli;
    private long _lastMs;

    public bool Quarantined { get; private set; }

    /// <summary>Current value in whole points, after decay to <paramref name="nowMs"/>.</summary>
    public long Value(long nowMs, SuspicionPolicy policy)
    {
        Decay(nowMs, policy);
        return _milli / 1000;
    }

    /// <summary>Adds evidence; true when this addition put the party into quarantine.</summary>
    public bool Add(long nowMs, int weight, SuspicionPolicy policy)
    {
        ArgumentNullException.ThrowIfNull(policy);
        Decay(nowMs, policy);
        _milli = Math.Min(_milli + weight * 1000L, 1_000_000_000L);
        if (!Quarantined && _milli >= policy.QuarantineAt * 1000L)
        {
            Quarantined = true;
            return true;
        }
        return false;
    }

    /// <summary>Whether the party is quarantined at <paramref name="nowMs"/> (decay may release it).</summary>
    public bool IsQuarantined(long nowMs, SuspicionPolicy policy)
    {
        Decay(nowMs, policy);
        return Quarantined;
    }

    /// <summary>
    /// Value and quarantine at <paramref name="nowMs"/> as <see cref="Value"/> and <see cref="IsQuarantined"/> would
    /// give them, without recording the decay: for observers (status, the sieve's read model), whose reading must
    /// not change agreed state (the decay's time is part of the snapshot).
    /// </summary>
    public (long Value, bool Quarantined) Peek(long nowMs, SuspicionPolicy policy)
    {
        ArgumentNullException.ThrowIfNull(policy);
        var milli = _milli;
        if (nowMs > _lastMs)
        {
            milli = Math.Max(0, milli - (Math.Min(nowMs - _lastMs, 1_000_000_000L) * policy.DecayPerSecond));
        }
        return (milli / 1000, Quarantined && milli >= policy.ReleaseBelow * 1000L);
    }

    /// <summary>
    /// Agreed milliseconds from <paramref name="nowMs"/> until decay releases the party, if no more evidence comes
    /// (0 when not quarantined; <see cref="long.MaxValue"/> when the policy never decays).
    /// </summary>
    public long MsUntilRelease(long nowMs, SuspicionPolicy policy)
    {
        Decay(nowMs, policy);
        if (!Quarantined)
        {
            return 0;
        }
        if (policy.DecayPerSecond <= 0)
        {
            return long.MaxValue;
        }
        // Decay removes DecayPerSecond milli-points a millisecond; released once below ReleaseBelow points.
        var above = _milli - (policy.ReleaseBelow * 1000L) + 1;
        return (above + policy.DecayPerSecond - 1) / policy.DecayPerSecond;
    }

    /// <summary>A counter at zero and not quarantined carries no information and can be forgotten.</summary>
    public bool IsIdle(long nowMs, SuspicionPolicy policy)
    {
        Decay(nowMs, policy);
        return _milli == 0 && !Quarantined;
    }

    public void WriteTo(CanonicalWriter w)
    {
        ArgumentNullException.ThrowIfNull(w);
        w.Seq(_milli);
        w.I64(_lastMs);
        w.Bool(Quarantined);
    }

    public static SuspicionCounter ReadFrom(ref CanonicalReader r) =>
        new() { _milli = r.Seq("suspicion"), _lastMs = r.I64("suspicion time"), Quarantined = r.Bool("quarantined") };

    private void Decay(long nowMs, SuspicionPolicy policy)
    {
        ArgumentNullException.ThrowIfNull(policy);
        if (nowMs > _lastMs)
        {
            var elapsed = Math.Min(nowMs - _lastMs, 1_000_000_000L);
            _milli = Math.Max(0, _milli - elapsed * policy.DecayPerSecond);
            _lastMs = nowMs;
        }
        if (Quarantined && _milli < policy.ReleaseBelow * 1000L)
        {
            Quarantined = false;
        }
    }
}
