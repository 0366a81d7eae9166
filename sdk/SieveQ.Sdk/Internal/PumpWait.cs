using System.Threading.Channels;

namespace SieveQ.Sdk.Internal;

/// <summary>
/// The "wait to read" of one channel, kept across a pump's wake-ups: a single-reader channel allows
/// one outstanding waiter, and a fresh waiter per wake-up would pile up.
/// </summary>
internal sealed class ChannelWaiter<T>
{
    private readonly ChannelReader<T> _reader;
    private Task<bool>? _pending;

    public ChannelWaiter(ChannelReader<T> reader) => _reader = reader;

    /// <summary>Completes when the channel has an item or is completed; the same task until it does.</summary>
    public Task<bool> Readable(CancellationToken ct)
    {
        if (_pending is { IsCompleted: true })
        {
            _pending = null;
        }
        return _pending ??= _reader.WaitToReadAsync(ct).AsTask();
    }
}

/// <summary>Lets a pump sleep until one of its inputs is ready or its next deadline passes.</summary>
internal static class PumpWait
{
    /// <summary>Waits for any of <paramref name="signals"/> or for <paramref name="delayMs"/> (negative: no deadline).</summary>
    public static async Task AnyAsync(Task[] signals, long delayMs, CancellationToken ct)
    {
        if (delayMs == 0 || Array.Exists(signals, s => s.IsCompleted))
        {
            return;
        }
        if (delayMs < 0)
        {
            await Task.WhenAny(signals).ConfigureAwait(false);
            return;
        }
        using var timer = CancellationTokenSource.CreateLinkedTokenSource(ct);
        var delay = Task.Delay(TimeSpan.FromMilliseconds(delayMs), timer.Token);
        await Task.WhenAny([.. signals, delay]).ConfigureAwait(false);
        await timer.CancelAsync().ConfigureAwait(false);
    }
}
