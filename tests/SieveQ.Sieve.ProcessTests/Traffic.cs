using System.Buffers.Binary;
using System.Collections.Concurrent;
using SieveQ.Sdk.Receiver;
using SieveQ.Sdk.Sender;

namespace SieveQ.Sieve.ProcessTests;

/// <summary>
/// Test traffic whose every payload says who sent it and its index in that sender's stream
/// (<c>u32 sender | u32 index | filler derived from both</c>), so a receiver can check content,
/// order and count without trusting anything the sieve reports.
/// </summary>
internal static class Traffic
{
    public const int Size = 200;

    public static byte[] Payload(int sender, int index, int size = Size)
    {
        var b = new byte[size];
        BinaryPrimitives.WriteInt32LittleEndian(b, sender);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(4), index);
        for (var i = 8; i < b.Length; i++)
        {
            b[i] = (byte)(sender * 31 + index * 7 + i);
        }
        return b;
    }

    /// <summary>Sends <paramref name="count"/> messages (indices from <paramref name="first"/>) and waits until f+1 replica-SQs acknowledged the last.</summary>
    public static async Task SendAsync(SieveQSender sender, int count, TimeSpan timeout, int first = 0, Func<int, Task>? onEach = null)
    {
        using var cts = new CancellationTokenSource(timeout);
        long last = 0;
        for (var i = first; i < first + count; i++)
        {
            last = await sender.SendAsync(SieveDeployment.ReceiverId, Payload(sender.Id, i), cts.Token);
            if (onEach is not null)
            {
                await onEach(i);
            }
        }
        await sender.WaitAcknowledgedAsync(last, cts.Token);
    }
}

/// <summary>What a receiver got, checked message by message as it arrives.</summary>
internal sealed class DeliveryLog
{
    private readonly ConcurrentDictionary<int, int> _next = new();
    private readonly ConcurrentDictionary<int, long> _lastSeq = new();
    private readonly ConcurrentQueue<string> _violations = new();
    private long _count;

    public long Count => Interlocked.Read(ref _count);

    public IReadOnlyCollection<string> Violations => _violations;

    public int NextIndex(int sender) => _next.GetValueOrDefault(sender);

    /// <summary>Records one delivery; anything out of order, repeated, altered or from the wrong sender is a violation.</summary>
    public void Record(ReceivedMessage m)
    {
        var data = m.Data.Span;
        if (data.Length < 8)
        {
            _violations.Enqueue($"sender {m.Sender} seq {m.SenderSeq}: {data.Length} bytes");
            return;
        }
        var claimed = BinaryPrimitives.ReadInt32LittleEndian(data);
        var index = BinaryPrimitives.ReadInt32LittleEndian(data[4..]);
        if (claimed != m.Sender || !data.SequenceEqual(Traffic.Payload(claimed, index, data.Length)))
        {
            _violations.Enqueue($"sender {m.Sender} seq {m.SenderSeq}: payload altered or from sender {claimed}");
        }
        var expected = _next.GetValueOrDefault(m.Sender);
        if (index != expected)
        {
            _violations.Enqueue($"sender {m.Sender}: got index {index}, expected {expected} ({(index < expected ? "duplicate" : "gap")})");
        }
        _next[m.Sender] = Math.Max(expected, index + 1);
        if (_lastSeq.TryGetValue(m.Sender, out var previous) && m.SenderSeq <= previous)
        {
            _violations.Enqueue($"sender {m.Sender}: seq {m.SenderSeq} after {previous}");
        }
        _lastSeq[m.Sender] = m.SenderSeq;
        Interlocked.Increment(ref _count);
    }

    /// <summary>Reads <paramref name="receiver"/> into this log until every sender reached its expected count or the timeout passed.</summary>
    /// <param name="commitEvery">Also commit after this many messages (0: only at the end). A queue filled to its byte budget
    /// drains only as the receiver commits, so a reader that commits at the end alone would wait for ever.</param>
    public async Task ReadUntilAsync(SieveQReceiver receiver, IReadOnlyDictionary<int, int> expected, TimeSpan timeout, int commitEvery = 0)
    {
        using var cts = new CancellationTokenSource(timeout);
        if (Done(expected))
        {
            return;
        }
        try
        {
            await foreach (var m in receiver.ReadAllAsync(cts.Token))
            {
                Record(m);
                if (Done(expected))
                {
                    await receiver.CommitAsync(CancellationToken.None);
                    return;
                }
                if (commitEvery > 0 && Count % commitEvery == 0)
                {
                    await receiver.CommitAsync(cts.Token);
                }
            }
        }
        catch (OperationCanceledException) when (cts.IsCancellationRequested)
        {
            // reported by the caller's assertion on the counts
        }
    }

    private bool Done(IReadOnlyDictionary<int, int> expected) => expected.All(kv => NextIndex(kv.Key) >= kv.Value);

    public void AssertExactlyOnceInOrder(IReadOnlyDictionary<int, int> expected)
    {
        Assert.Empty(Violations);
        foreach (var (sender, count) in expected)
        {
            Assert.Equal(count, NextIndex(sender));
        }
        Assert.Equal(expected.Values.Sum(), Count);
    }
}
