using System.Buffers.Binary;
using System.Security.Cryptography;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Bench;

/// <summary>
/// The benchmark's replicated state machine: counts requests and folds every payload into a SHA-256 hash
/// chain, so replicas that executed different requests or orders end with different state hashes. Each
/// result is 16 bytes: the request's execution index and 8 bytes of the chain, identical on every correct
/// replica, so the client's f+1 vote is meaningful.
/// </summary>
public sealed class BenchmarkApplication : IReplicatedApplication
{
    public const int ResultBytes = 16;
    private readonly IncrementalHash _hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
    private readonly byte[] _chain = new byte[32];
    private long _count;
    private volatile string _describe = Describe(0, new byte[32]);

    public long Count => _count;

    /// <summary>"count:hash-prefix"; read from other threads for status reporting.</summary>
    public string StateDescription => _describe;

    public IReadOnlyList<byte[]> Execute(ExecutionContext context, IReadOnlyList<ClientRequest> requests)
    {
        var results = new byte[requests.Count][];
        Span<byte> head = stackalloc byte[12];
        for (var i = 0; i < requests.Count; i++)
        {
            var r = requests[i];
            BinaryPrimitives.WriteInt32LittleEndian(head, r.From);
            BinaryPrimitives.WriteInt64LittleEndian(head[4..], r.Sequence);
            _hash.AppendData(_chain);
            _hash.AppendData(head);
            _hash.AppendData(r.Payload);
            _hash.GetHashAndReset(_chain);
            _count++;
            var result = new byte[ResultBytes];
            BinaryPrimitives.WriteInt64LittleEndian(result, _count);
            _chain.AsSpan(0, 8).CopyTo(result.AsSpan(8));
            results[i] = result;
        }
        _describe = Describe(_count, _chain);
        return results;
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
