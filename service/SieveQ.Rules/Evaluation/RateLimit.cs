using SieveQ.Rules.Document;

namespace SieveQ.Rules.Evaluation;

/// <summary>
/// A per-sender rate or quota over windows of agreed time. Windows are aligned to multiples of their
/// length since the epoch, and the count is the sliding-window estimate "this window + the share of
/// the previous window still inside the last W ms", in integer arithmetic so every replica computes the
/// same number. Unlike plain fixed windows, a burst straddling a boundary cannot reach twice the limit.
/// </summary>
internal sealed class RateLimit(int index, RateSpec spec)
{
    public int Index { get; } = index;

    public string Name { get; } = spec.Name;

    public long WindowMs { get; } = spec.WindowMs;

    public long MaxMessages { get; } = spec.Messages ?? long.MaxValue;

    public long MaxBytes { get; } = spec.Bytes ?? long.MaxValue;

    /// <summary>Null when the message fits; otherwise what it would exceed.</summary>
    public string? Check(RateWindow? w, long now, int bytes)
    {
        if (w is null)
        {
            return 1 > MaxMessages ? Describe("messages", 0, MaxMessages) : bytes > MaxBytes ? Describe("bytes", 0, MaxBytes) : null;
        }
        Roll(w, now);
        var elapsed = Math.Clamp(now - w.WindowStart, 0, WindowMs);
        var msgs = w.CurrentMessages + Share(w.PreviousMessages, elapsed);
        if (msgs + 1 > MaxMessages)
        {
            return Describe("messages", msgs, MaxMessages);
        }
        var total = w.CurrentBytes + Share(w.PreviousBytes, elapsed);
        return total + bytes > MaxBytes ? Describe("bytes", total, MaxBytes) : null;
    }

    public void Commit(RateWindow w, long now, int bytes)
    {
        Roll(w, now);
        w.CurrentMessages++;
        w.CurrentBytes += bytes;
    }

    public RateWindow Open(long now) => new() { WindowStart = Align(now) };

    private void Roll(RateWindow w, long now)
    {
        var start = Align(now);
        if (start <= w.WindowStart)
        {
            return; // same window, or agreed time stepped back: keep counting in the current one
        }
        if (start - w.WindowStart == WindowMs)
        {
            w.PreviousMessages = w.CurrentMessages;
            w.PreviousBytes = w.CurrentBytes;
        }
        else
        {
            w.PreviousMessages = 0;
            w.PreviousBytes = 0;
        }
        w.CurrentMessages = 0;
        w.CurrentBytes = 0;
        w.WindowStart = start;
    }

    private long Align(long now)
    {
        var r = now % WindowMs;
        return now - (r < 0 ? r + WindowMs : r);
    }

    private long Share(long previous, long elapsed) => (long)((Int128)previous * (WindowMs - elapsed) / WindowMs);

    private string Describe(string unit, long used, long max) =>
        $"rate {Name}: {used} {unit} in the last {WindowMs} ms, limit {max}";
}

/// <summary>One sender's counts for one rate.</summary>
internal sealed class RateWindow
{
    public long WindowStart { get; set; }

    public long PreviousMessages { get; set; }

    public long PreviousBytes { get; set; }

    public long CurrentMessages { get; set; }

    public long CurrentBytes { get; set; }
}
