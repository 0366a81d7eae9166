namespace SieveQ.Sieve.PreSq;

/// <summary>
/// Check (a): the senders allowed to talk to this pre-SQ, and the quarantine list that overrides it
/// (paper 4.4.1: a sender whose suspicion counter crossed the threshold is moved to quarantine until it
/// decays; the administrator may also put senders there). Thread-safe; updates are rare.
/// </summary>
public sealed class SenderWhitelist
{
    private HashSet<int> _allowed;
    private HashSet<int> _quarantined = [];
    private readonly Lock _write = new();

    public SenderWhitelist(IEnumerable<int> allowed)
    {
        _allowed = [.. allowed];
    }

    public bool IsAllowed(int sender) => Volatile.Read(ref _allowed).Contains(sender);

    public bool IsQuarantined(int sender) => Volatile.Read(ref _quarantined).Contains(sender);

    public void Allow(int sender) => Update(ref _allowed, s => s.Add(sender));

    public void Remove(int sender) => Update(ref _allowed, s => s.Remove(sender));

    public void Quarantine(int sender) => Update(ref _quarantined, s => s.Add(sender));

    public void Release(int sender) => Update(ref _quarantined, s => s.Remove(sender));

    /// <summary>Copy-on-write so the hot path reads without locking.</summary>
    private void Update(ref HashSet<int> field, Func<HashSet<int>, bool> change)
    {
        lock (_write)
        {
            var copy = new HashSet<int>(field);
            change(copy);
            Volatile.Write(ref field, copy);
        }
    }
}
