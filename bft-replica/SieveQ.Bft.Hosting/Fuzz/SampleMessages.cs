using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Fuzz;

/// <summary>One well-formed instance of every message type: the seeds the fuzzer mutates.</summary>
public static class SampleMessages
{
    public static IReadOnlyList<BftMessage> All(Random rng)
    {
        byte[] Bytes(int n)
        {
            var b = new byte[n];
            rng.NextBytes(b);
            return b;
        }
        Digest D() => new(Bytes(32));
        ClientRequest Req() => new(4 + rng.Next(8), rng.Next(1, 1000), Bytes(rng.Next(0, 200)));
        var batch = new Batch(1_700_000_000_000, [Req(), Req(), Req()]);
        var cert = new PreparedCertificate(7, 1, batch.Hash, batch, [new WriteSignature(0, Bytes(64)), new WriteSignature(1, Bytes(64)), new WriteSignature(2, Bytes(64))]);
        var stopData = new StopData(1, 2, 6, [cert], Bytes(64));
        var manifest = StateManifest.Of(Bytes(700), 256);
        var bare = stopData with { Certificates = [cert with { Value = null }] };
        return
        [
            Req(),
            new Reply(1, 5, 9, 3, Bytes(16)),
            new Forward(2, [Req(), Req()]),
            new Propose(0, 0, 5, batch),
            new Write(1, 0, 5, batch.Hash, Bytes(64)),
            new Accept(2, 0, 5, batch.Hash),
            new Heartbeat(0, 0, 5),
            new Stop(3, 1, [Req()]),
            stopData,
            new Sync(1, 2, [bare, bare with { From = 2 }, bare with { From = 3 }], 7, batch),
            new Sync(1, 2, [bare, bare with { From = 2 }, bare with { From = 3 }], 7, batch, new Batch(batch.Timestamp - 1, batch.Requests)),
            new Checkpoint(1, 128, D()),
            new StateRequest(2, 100, true),
            new StateReply(0, 128, D(), manifest.Root, manifest, [new LoggedDecision(129, batch.Hash, batch), new LoggedDecision(130, D(), null)], 64, D(), D()),
            new StateReply(1, 128, D(), D(), null, [new LoggedDecision(129, batch.Hash, null)]),
            new StateChunkRequest(3, 128, 1),
            new StateChunk(0, 128, 1, true, Bytes(300)),
            new StateChunk(0, 128, 2, false, ReadOnlyMemory<byte>.Empty),
        ];
    }
}
