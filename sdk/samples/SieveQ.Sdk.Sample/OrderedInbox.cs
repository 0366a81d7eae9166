using System.Globalization;
using System.Text;
using SieveQ.Sdk.Receiver;

namespace SieveQ.Sdk.Sample;

/// <summary>
/// The receiving side of the sample: takes this run's messages from the receiver, commits each one, and checks
/// what the SDK promises: from one sender, in order, exactly once. Messages of an earlier run of the sample
/// (delivered again if that run stopped before committing them) are counted apart.
/// </summary>
internal sealed class OrderedInbox(string runId, int senderId, int expected)
{
    private readonly string _prefix = $"run {runId} message ";
    private readonly Lock _lock = new();
    private readonly List<TaskCompletionSource> _waiters = [];
    private int _received;

    public int Received => Volatile.Read(ref _received);
    public int FromEarlierRuns { get; private set; }

    /// <summary>Reads until every expected message has arrived; throws on a gap, a duplicate or a stranger.</summary>
    public async Task RunAsync(SieveQReceiver receiver, CancellationToken ct)
    {
        await foreach (var m in receiver.ReadAllAsync(ct).ConfigureAwait(false))
        {
            Accept(m);
            await receiver.CommitAsync(ct).ConfigureAwait(false);
            if (Received == expected)
            {
                return;
            }
        }
    }

    /// <summary>Completes once <paramref name="count"/> messages of this run have arrived.</summary>
    public async Task WaitForAsync(int count, CancellationToken ct)
    {
        while (Received < count)
        {
            var changed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            lock (_lock)
            {
                if (Received >= count)
                {
                    return;
                }
                _waiters.Add(changed);
            }
            await changed.Task.WaitAsync(ct).ConfigureAwait(false);
        }
    }

    private void Accept(ReceivedMessage m)
    {
        if (m.Sender != senderId)
        {
            throw new InvalidDataException($"a message from sender {m.Sender}, expected only {senderId}");
        }
        var text = Encoding.UTF8.GetString(m.Data.Span);
        if (!text.StartsWith(_prefix, StringComparison.Ordinal))
        {
            FromEarlierRuns++;
            return;
        }
        var index = int.Parse(text.AsSpan(_prefix.Length), NumberStyles.None, CultureInfo.InvariantCulture);
        if (index != Received)
        {
            throw new InvalidDataException(index < Received
                ? $"message {index} delivered twice (sequence {m.SenderSeq})"
                : $"message {Received} missing: got {index} (sequence {m.SenderSeq})");
        }
        TaskCompletionSource[] wake;
        lock (_lock)
        {
            Interlocked.Increment(ref _received);
            wake = [.. _waiters];
            _waiters.Clear();
        }
        foreach (var w in wake)
        {
            w.TrySetResult();
        }
    }

    public static byte[] Payload(string runId, int index) =>
        Encoding.UTF8.GetBytes(string.Create(CultureInfo.InvariantCulture, $"run {runId} message {index}"));
}
