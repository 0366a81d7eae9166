using System.Buffers.Binary;
using System.Security.Cryptography;
using SieveQ.Bft.Core;
using SieveQ.Bft.Protocol;
using SieveQ.Bft.Simulation.Kernel;

namespace SieveQ.Bft.Simulation.Crypto;

/// <summary>
/// Client request authentication for the simulation: the payload ends with a tag over (client,
/// sequence, body) under a per-client secret that correct replica hosts can check but Byzantine
/// behaviours never see. A request a Byzantine replica invents therefore fails verification,
/// which is what makes the validity invariant meaningful.
/// </summary>
internal sealed class ClientAuthenticator : IRequestVerifier
{
    public const int TagBytes = 16;
    private readonly Dictionary<int, byte[]> _keys = [];

    public ClientAuthenticator(IEnumerable<int> clientIds, SimRandom rng)
    {
        foreach (var id in clientIds)
        {
            _keys[id] = rng.Bytes(32);
        }
    }

    public byte[] Seal(int client, long sequence, ReadOnlySpan<byte> body)
    {
        var payload = new byte[body.Length + TagBytes];
        body.CopyTo(payload);
        Tag(_keys[client], client, sequence, body, payload.AsSpan(body.Length));
        return payload;
    }

    public bool Verify(ClientRequest request)
    {
        ArgumentNullException.ThrowIfNull(request);
        if (!_keys.TryGetValue(request.From, out var key) || request.Payload.Length < TagBytes)
        {
            return false;
        }
        var body = request.Payload.AsSpan(0, request.Payload.Length - TagBytes);
        Span<byte> expected = stackalloc byte[TagBytes];
        Tag(key, request.From, request.Sequence, body, expected);
        return CryptographicOperations.FixedTimeEquals(expected, request.Payload.AsSpan(body.Length));
    }

    private static void Tag(byte[] key, int client, long sequence, ReadOnlySpan<byte> body, Span<byte> tag)
    {
        var data = new byte[12 + body.Length];
        BinaryPrimitives.WriteInt32LittleEndian(data, client);
        BinaryPrimitives.WriteInt64LittleEndian(data.AsSpan(4), sequence);
        body.CopyTo(data.AsSpan(12));
        Span<byte> mac = stackalloc byte[32];
        HMACSHA256.HashData(key, data, mac);
        mac[..TagBytes].CopyTo(tag);
    }
}
