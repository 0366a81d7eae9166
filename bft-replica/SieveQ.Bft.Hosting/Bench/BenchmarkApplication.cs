using System.Buffers.Binary;
using System.Security.Cryptography;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Bench;

/// <summary>
/// The benchmark's replicated state machine: counts requests and folds every batch (each request's client,
/// sequence and payload, in order) into a SHA-256 hash chain, so replicas that executed different requests
/// or orders end with different state hashes. One hash per batch rather than per request keeps the app from
/// dominating the profile with per-call crypto overhead. Each result is 16 bytes: the request's execution
/// index and 8 bytes of the chain after its batch, identical on every correct replica, so the client's f+1
/// vote is meaningful.
/// </summary>
public sealed class BenchmarkApplication : IReplicatedApplication
{
    public const int ResultBytes = 16;
    private readonly byte[] _chain = new byte[32];
    private byte[] _scratch = new byte[64 * 1024];
    private long _count;
    private volatile string _describe = Describe(0, new byte[32]);

    public long Count => _count;

    /// <summary>"count:hash-prefix"; read from other threads for status reporting.</summary>
    public string StateDescription => _describe;

    public ExecutionOutcome Execute(DecisionContext context, IReadOnlyList<ClientRequest> requests)
    {
        var size = 32;
        foreach (var r in requests)
        {
            size += 12 + r.Payload.Length;
        }
        if (_scratch.Length < size)
        {
            _scratch = new byte[Math.Max(size, _scratch.Length * 2)];
        }
        var at = _scratch.AsSpan();
        _chain.CopyTo(at);
        at = at[32..];
        foreach (var r in requests)
        {
            BinaryPrimitives.WriteInt32LittleEndian(at, r.From);
            BinaryPrimitives.WriteInt64LittleEndian(at[4..], r.Sequence);
            r.Payload.CopyTo(at[12..]);
            at = at[(12 + r.Payload.Length)..];
        }
        SHA256.HashData(_scratch.AsSpan(0, size), _chain);
        var results = new byte[requests.Count][];
        for (var i = 0; i < requests.Count; i++)
        {
            _count++;
            var result = new byte[ResultBytes];
            BinaryPrimitives.WriteInt64LittleEndian(result, _count);
            _chain.AsSpan(0, 8).CopyTo(result.AsSpan(8));
            results[i] = result;
        }
        _describe = Describe(_count, _chain);
        return new ExecutionOutcome(results);
    }

    public byte[] TakeSnapshot()
    {
        var s = new byte[8 + 32];
        BinaryPrimitives.WriteInt64LittleEndian(s, _count);
        _chain.CopyTo(s, 8);
        return s;
    }

    public void RestoreSnapshot(ReadOnlySpan<byte> snapshot)
    {
        if (snapshot.Length != 40)
        {
            throw new ArgumentException("benchmark snapshot is 40 bytes", nameof(snapshot));
        }
        _count = BinaryPrimitives.ReadInt64LittleEndian(snapshot);
        snapshot[8..].CopyTo(_chain);
        _describe = Describe(_count, _chain);
    }

    public static long ExecutionIndexOf(ReadOnlySpan<byte> result) => BinaryPrimitives.ReadInt64LittleEndian(result);

    private static string Describe(long count, byte[] chain) => $"{count}:{Convert.ToHexStringLower(chain.AsSpan(0, 8))}";
}
