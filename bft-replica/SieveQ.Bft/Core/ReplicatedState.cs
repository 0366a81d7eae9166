using System.Buffers;
using SieveQ.Bft.Codec;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Core;

/// <summary>
/// The bytes a checkpoint covers: the last decided instance and its agreed timestamp, the client
/// table, and the application's snapshot. The state hash is SHA-256 of exactly these bytes.
/// </summary>
internal static class ReplicatedState
{
    private static ReadOnlySpan<byte> Tag => "SQBFT/STATE/v1"u8;

    public static byte[] Encode(long lastDecided, long lastTimestamp, ClientTable clients, byte[] appSnapshot)
    {
        var buf = new ArrayBufferWriter<byte>(64 + appSnapshot.Length);
        var w = new WireWriter(buf);
        w.Raw(Tag);
        w.I64(lastDecided);
        w.I64(lastTimestamp);
        clients.Encode(buf);
        w.Bytes(appSnapshot);
        return buf.WrittenSpan.ToArray();
    }

    public static (long LastDecided, long LastTimestamp, ClientTable Clients, byte[] AppSnapshot) Decode(ReadOnlySpan<byte> state, ReplicaConfig config)
    {
        var r = new WireReader(state);
        for (var i = 0; i < Tag.Length; i++)
        {
            if (r.U8("state tag") != Tag[i])
            {
                throw new MalformedMessageException("state: wrong domain tag");
            }
        }
        var last = r.NonNegative64("last decided");
        var ts = r.I64("last timestamp");
        var clients = ClientTable.Decode(ref r, config.MaxClients, config.ClientWindow, config.RepliesRememberedPerClient);
        var app = r.Bytes(WireLimits.MaxSnapshotBytes, "application snapshot");
        r.End("state");
        return (last, ts, clients, app);
    }

    public static Digest Hash(byte[] state) => Digest.Compute(state);
}
