using SieveQ.Bft.Codec;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Simulation.Byzantine;

/// <summary>
/// Corrupts a quarter of what it sends: flipped or truncated frames (the decoder must reject or
/// survive them), and changed fields, re-signed where a signature would otherwise stop the
/// message before the core's logic sees it.
/// </summary>
internal sealed class MessageMutator(ByzantineContext ctx) : ByzantineBehaviour(ctx)
{
    public override void OnOutput(Outgoing o, List<Outgoing> sink)
    {
        if (o.Message is not { } m || !Ctx.Rng.Chance(0.25))
        {
            sink.Add(o);
            return;
        }
        switch (Ctx.Rng.Next(4))
        {
            case 0:
                {
                    var frame = MessageCodec.Encode(m);
                    var flips = 1 + Ctx.Rng.Next(3);
                    for (var i = 0; i < flips; i++)
                    {
                        frame[Ctx.Rng.Next(frame.Length)] ^= (byte)(1 << Ctx.Rng.Next(8));
                    }
                    Ctx.Count("mutate.bits");
                    sink.Add(o with { Message = null, Frame = frame });
                    return;
                }
            case 1:
                {
                    var frame = MessageCodec.Encode(m);
                    Ctx.Count("mutate.truncated");
                    sink.Add(o with { Message = null, Frame = frame[..Ctx.Rng.Next(frame.Length)] });
                    return;
                }
            default:
                {
                    var changed = MutateFields(m);
                    Ctx.Count(changed is null ? "mutate.withheld" : $"mutate.field.{m.Type}");
                    if (changed is not null)
                    {
                        sink.Add(o with { Message = changed });
                    }
                    return;
                }
        }
    }

    private BftMessage? MutateFields(BftMessage m)
    {
        var rng = Ctx.Rng;
        switch (m)
        {
            case Propose p:
                return rng.Next(4) switch
                {
                    0 => p with { ConsensusId = Math.Max(0, p.ConsensusId + rng.Range(-2, 3)) },
                    1 => p with { Regency = p.Regency + 1 },
                    2 when p.Value.Requests.Count > 0 => p with { Value = new Batch(p.Value.Timestamp, [.. p.Value.Requests, p.Value.Requests[0]]) },
                    _ => p with { Value = new Batch(p.Value.Timestamp, p.Value.Requests.Skip(1).ToArray()) },
                };
            case Write w:
                {
                    if (rng.Chance(0.5))
                    {
                        var h = Ctx.RandomDigest();
                        return w with { BatchHash = h, Signature = Ctx.SignWrite(w.Regency, w.ConsensusId, h) };
                    }
                    return w with { ConsensusId = w.ConsensusId + 1 };
                }
            case Accept a:
                return rng.Chance(0.5) ? a with { BatchHash = Ctx.RandomDigest() } : a with { ConsensusId = a.ConsensusId + rng.Range(1, 3) };
            case Heartbeat h:
                return rng.Chance(0.5) ? h with { LastDecided = h.LastDecided + rng.Range(1, 1_000) } : h with { Regency = h.Regency + 1 };
            case Checkpoint c:
                return rng.Chance(0.5) ? c with { StateHash = Ctx.RandomDigest() } : c with { ConsensusId = c.ConsensusId + Ctx.Config.CheckpointInterval };
            case Stop s:
                return s with { NewRegency = s.NewRegency + (int)rng.Range(1, 2_000) };
            case StopData sd:
                return Ctx.Resign(sd with { NewRegency = sd.NewRegency + 1 });
            case Sync s:
                return s with { Regency = s.Regency + 1 };
            case StateRequest q:
                return q with { LastExecuted = rng.Range(0, q.LastExecuted + 50) };
            case StateReply r when r.Manifest is { ChunkCount: > 0 } manifest && rng.Chance(0.5):
                {
                    var hashes = manifest.ChunkHashes.ToArray();
                    hashes[rng.Next(hashes.Length)] = Ctx.RandomDigest();
                    return r with { Manifest = manifest with { ChunkHashes = hashes } };
                }
            case StateReply r:
                return r with { Log = r.Log.Select(e => e with { BatchHash = Ctx.RandomDigest() }).ToArray() };
            case StateChunkRequest q:
                return q with { Index = q.Index + 1 };
            case StateChunk c when c.Data.Length > 0:
                {
                    var copy = c.Data.ToArray();
                    copy[rng.Next(copy.Length)] ^= 0x5A;
                    return c with { Data = copy };
                }
            case Reply r:
                return r with { Result = rng.Bytes(32) };
            default:
                return null;
        }
    }
}
