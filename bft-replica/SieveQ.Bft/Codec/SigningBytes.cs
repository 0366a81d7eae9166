using System.Buffers;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Codec;

/// <summary>
/// The exact bytes each signature covers, each with its own domain tag so a signature over one
/// structure can never be replayed as a signature over another.
/// </summary>
public static class SigningBytes
{
    public const int RequestBytes = 16 + 4 + 8 + 32;

    /// <summary>
    /// What a client signs for each request: its id, the request's number and the SHA-256 of the payload
    /// (so a verifier hashes a large payload once and never copies it). Binding the number stops a signed
    /// request being replayed under a fresh number; binding the id stops it being passed off as another client's.
    /// </summary>
    public static byte[] ForRequest(int client, long sequence, ReadOnlySpan<byte> payload)
    {
        var buf = new ArrayBufferWriter<byte>(RequestBytes);
        var w = new WireWriter(buf);
        w.Raw("SQBFT/REQUEST/v1"u8);
        w.I32(client);
        w.I64(sequence);
        w.Digest(Digest.Compute(payload));
        return buf.WrittenSpan.ToArray();
    }

    public static byte[] ForWrite(int regency, long consensusId, Digest hash)
    {
        var buf = new ArrayBufferWriter<byte>(64);
        var w = new WireWriter(buf);
        w.Raw("SQBFT/WRITE/v1"u8);
        w.I32(regency);
        w.I64(consensusId);
        w.Digest(hash);
        return buf.WrittenSpan.ToArray();
    }

    public static byte[] ForStopData(int from, int newRegency, long lastDecided, IReadOnlyList<PreparedCertificate> certificates)
    {
        var buf = new ArrayBufferWriter<byte>(256);
        var w = new WireWriter(buf);
        w.Raw("SQBFT/STOPDATA/v1"u8);
        w.I32(from);
        w.I32(newRegency);
        w.I64(lastDecided);
        w.I32(certificates.Count);
        foreach (var c in certificates)
        {
            w.I64(c.ConsensusId);
            w.I32(c.Regency);
            w.Digest(c.BatchHash);
            w.I32(c.Writes.Count);
            foreach (var s in c.Writes)
            {
                w.I32(s.Replica);
                w.Bytes(s.Signature);
            }
        }
        return buf.WrittenSpan.ToArray();
    }
}
