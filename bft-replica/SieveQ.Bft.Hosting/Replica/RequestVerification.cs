using SieveQ.Bft.Codec;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Replica;

/// <summary>
/// Runs the request check (<see cref="AuthenticatedRequestVerifier"/>: the client's proof, then the application's
/// check) on the receiving link's thread and remembers verdicts by the hash of the request's signing bytes
/// (client, number, payload hash) and its proof, so the payload is hashed once, and so a request seen first from its client is not checked again when it comes back inside a PROPOSE,
/// FORWARD, STOP or SYNC. The cache is two generations of bounded size (old one dropped whole).
/// </summary>
public sealed class RequestVerification(AuthenticatedRequestVerifier verifier, int generationSize = 65_536)
{
    private readonly Lock _lock = new();
    private Dictionary<Digest, RequestVerdict> _current = [];
    private Dictionary<Digest, RequestVerdict> _previous = [];
    private long _badProofs;
    private long _refused;

    /// <summary>Requests refused because they were not made by the client they name (counted once per distinct request).</summary>
    public long BadProofs => Interlocked.Read(ref _badProofs);

    /// <summary>Requests made by their client and refused by the application's check.</summary>
    public long Refused => Interlocked.Read(ref _refused);

    public bool VerifyAll(BftMessage message)
    {
        foreach (var r in AuthenticatedRequestVerifier.RequestsIn(message))
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
        var signing = SigningBytes.ForRequest(request.From, request.Sequence, request.Payload);
        var key = KeyOf(signing, request.Proof);
        lock (_lock)
        {
            if (_current.TryGetValue(key, out var v) || _previous.TryGetValue(key, out v))
            {
                return v == RequestVerdict.Valid;
            }
        }
        var verdict = verifier.Check(request, signing);
        if (verdict == RequestVerdict.BadProof)
        {
            Interlocked.Increment(ref _badProofs);
        }
        else if (verdict == RequestVerdict.Refused)
        {
            Interlocked.Increment(ref _refused);
        }
        lock (_lock)
        {
            if (_current.Count >= generationSize)
            {
                _previous = _current;
                _current = [];
            }
            _current[key] = verdict;
        }
        return verdict == RequestVerdict.Valid;
    }

    private static Digest KeyOf(ReadOnlySpan<byte> signingBytes, ReadOnlySpan<byte> proof)
    {
        using var h = System.Security.Cryptography.IncrementalHash.CreateHash(System.Security.Cryptography.HashAlgorithmName.SHA256);
        h.AppendData(signingBytes);
        h.AppendData(proof);
        Span<byte> d = stackalloc byte[Digest.Size];
        h.GetHashAndReset(d);
        return new Digest(d);
    }
}
