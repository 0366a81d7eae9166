using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>
/// Serves state transfer wrongly: chunks with flipped bytes, cut short or padded, another chunk's bytes, chunks of a
/// checkpoint nobody asked for, false refusals, and state replies whose manifest lists made-up chunk hashes (with the
/// real root, or a root of its own that no correct replica vouches for). A recovering replica must refuse each bad
/// chunk on arrival, fetch it from another replica, and install only the state f+1 vouched for.
/// </summary>
internal sealed class BadChunkServer(ByzantineContext ctx) : ByzantineBehaviour(ctx)
{
    public override void OnOutput(Outgoing o, List<Outgoing> sink)
    {
        switch (o.Message)
        {
            case StateChunk { Held: true } c when Ctx.Rng.Chance(0.9):
                {
                    var (variant, bad) = Corrupt(c);
                    Ctx.Count($"bad-chunks.{variant}");
                    sink.Add(o with { Message = bad });
                    return;
                }
            case StateReply { Manifest: { ChunkCount: > 0 } m } r when Ctx.Rng.Chance(0.5):
                {
                    var hashes = m.ChunkHashes.Select(_ => Ctx.RandomDigest()).ToArray();
                    var lie = m with { ChunkHashes = hashes };
                    var ownRoot = Ctx.Rng.Chance(0.5);
                    Ctx.Count(ownRoot ? "bad-chunks.manifest-own-root" : "bad-chunks.manifest-wrong-hashes");
                    sink.Add(o with { Message = r with { Manifest = lie, ManifestRoot = ownRoot ? lie.Root : r.ManifestRoot } });
                    return;
                }
            default:
                sink.Add(o);
                return;
        }
    }

    private (string Variant, StateChunk Bad) Corrupt(StateChunk c)
    {
        var rng = Ctx.Rng;
        var data = c.Data.ToArray();
        switch (rng.Next(6))
        {
            case 0 when data.Length > 0:
                data[rng.Next(data.Length)] ^= (byte)(1 << rng.Next(8));
                return ("flipped", c with { Data = data });
            case 1 when data.Length > 1:
                return ("short", c with { Data = data[..rng.Next(data.Length)] });
            case 2:
                return ("padded", c with { Data = data.Concat(rng.Bytes(1 + rng.Next(64))).ToArray() });
            case 3:
                return ("refused", c with { Held = false, Data = ReadOnlyMemory<byte>.Empty });
            case 4:
                return ("other-checkpoint", c with { CheckpointId = c.CheckpointId + Ctx.Config.CheckpointInterval });
            default:
                return ("made-up", c with { Data = rng.Bytes(data.Length) });
        }
    }
}
