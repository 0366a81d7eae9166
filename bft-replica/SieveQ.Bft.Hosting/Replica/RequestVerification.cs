using System.Buffers.Binary;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Replica;

/// <summary>Accepts every request: for applications whose requests carry no signature of their own (the benchmark).</summary>
public sealed class AcceptAllRequestVerifier : IRequestVerifier
{
    public static readonly AcceptAllRequestVerifier Instance = new();
    public bool Verify(ClientRequest request) => true;
}

/// <summary>
/// Runs the application's request check on the receiving link's thread and remembers verdicts by request
/// hash, so a request seen first from its client is not checked again when it comes back inside a
/// PROPOSE, FORWARD, STOP or SYNC. The cache is two generations of bounded size (old one dropped whole).
/// </summary>
public sealed class RequestVerification(IRequestVerifier verifier, int generationSize = 65_536)
{
    private readonly Lock _lock = new();
    private Dictionary<Digest, bool> _current = [];
    private Dictionary<Digest, bool> _previous = [];

    public bool IsTrivial => verifier is AcceptAllRequestVerifier;

    public bool VerifyAll(BftMessage message) => message switch
    {
        ClientRequest r => Verify(r),
        Forward f => All(f.Requests),
        Stop s => All(s.TimedOut),
        Propose p => All(p.Value.Requests),
        Sync s => All(s.Value?.Requests ?? []) && All(s.PriorValue?.Requests ?? []),
        _ => true,
    };

    private bool All(IReadOnlyList<ClientRequest> requests)
    {
        foreach (var r in requests)
        {
            if (!Verify(r))
            {
                return false;
            }
        }
        return true;
    }

    public bool Verify(ClientRequest request)
    {
        if (IsTrivial)
        {
            return true;
        }
        var key = KeyOf(request);
        lock (_lock)
        {
            if (_current.TryGetValue(key, out var v) || _previous.TryGetValue(key, out v))
            {
                return v;
            }
        }
        var verdict = verifier.Verify(request);
        lock (_lock)
        {
            if (_current.Count >= generationSize)
            {
                _previous = _current;
                _current = [];
            }
            _current[key] = verdict;
        }
        return verdict;
    }

    private static Digest KeyOf(ClientRequest r)
    {
        using var h = System.Security.Cryptography.IncrementalHash.CreateHash(System.Security.Cryptography.HashAlgorithmName.SHA256);
        Span<byte> head = stackalloc byte[12];
        BinaryPrimitives.WriteInt32LittleEndian(head, r.From);
        BinaryPrimitives.WriteInt64LittleEndian(head[4..], r.Sequence);
        h.AppendData(head);
        h.AppendData(r.Payload);
        Span<byte> d = stackalloc byte[Digest.Size];
        h.GetHashAndReset(d);
        return new Digest(d);
    }
}
