using SieveQ.Bft.Codec;
using SieveQ.Bft.Core;
using SieveQ.Bft.Hosting.Storage;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Fuzz;

/// <summary>
/// Feeds damaged write-ahead-log segments to <see cref="WriteAheadLog.ReadSegment"/>: raw damage (which
/// the CRC mostly catches) and damaged record bodies re-framed with a valid CRC (which only the decoders
/// can catch). The contract: reading never throws, stops within the input, and what it returns reads
/// back the same once written again.
/// </summary>
public static class WalFuzzer
{
    public static FuzzReport Run(long iterations, int seed)
    {
        var rng = new Random(seed);
        var bodies = SampleRecords(rng).Select(r => WalRecordCodec.Encode(r)[WalRecordCodec.HeaderBytes..]).ToArray();
        var failures = new List<string>();
        long accepted = 0, rejected = 0;
        for (long i = 0; i < iterations && failures.Count < 20; i++)
        {
            var segment = Segment(rng, bodies);
            try
            {
                var records = WriteAheadLog.ReadSegment(segment, out var valid);
                if (valid < 0 || valid > segment.Length)
                {
                    failures.Add($"wal seed={seed} iteration={i}: valid length {valid} outside 0..{segment.Length}");
                    continue;
                }
                var again = WriteAheadLog.ReadSegment(records.SelectMany(WalRecordCodec.Encode).ToArray(), out _);
                if (!again.Select(Describe).SequenceEqual(records.Select(Describe)))
                {
                    failures.Add($"wal seed={seed} iteration={i}: recovered records do not read back the same");
                }
                accepted += records.Count;
                rejected += valid < segment.Length ? 1 : 0;
            }
            catch (Exception e)
            {
                failures.Add($"wal seed={seed} iteration={i}: {e.GetType().Name}: {e.Message}");
            }
        }
        return new FuzzReport(iterations, accepted, rejected, failures);
    }

    private static byte[] Segment(Random rng, byte[][] bodies)
    {
        var records = new List<byte[]>();
        for (var n = rng.Next(1, 6); n > 0; n--)
        {
            var body = bodies[rng.Next(bodies.Length)];
            records.Add(Frame(rng.Next(3) == 0 ? CodecFuzzer.Mutate(rng, body, bodies) : body));
        }
        byte[] segment = [.. records.SelectMany(r => r)];
        return rng.Next(4) == 0 ? CodecFuzzer.Mutate(rng, segment, [segment]) : segment;
    }

    private static byte[] Frame(byte[] body)
    {
        var framed = new byte[WalRecordCodec.HeaderBytes + body.Length];
        body.CopyTo(framed, WalRecordCodec.HeaderBytes);
        WalRecordCodec.WriteHeader(framed);
        return framed;
    }

    private static IEnumerable<DurableRecord> SampleRecords(Random rng)
    {
        var propose = SampleMessages.All(rng).OfType<Propose>().First();
        var batch = propose.Value;
        var writes = new[] { new WriteSignature(0, new byte[64]), new WriteSignature(1, new byte[64]), new WriteSignature(2, new byte[64]) };
        yield return new RegencyRecord(3);
        yield return new PreparedRecord(new PreparedCertificate(5, 1, batch.Hash, batch, writes));
        yield return new PreparedRecord(new PreparedCertificate(6, 1, batch.Hash, null, writes));
        yield return new DecisionRecord(5, batch);
        yield return new DecisionReference(5, batch.Hash);
        yield return new DecisionReference(6, batch.Hash);
        yield return new CheckpointRecord(4, Digest.Compute("state"u8), [1, 2, 3, 4]);
    }

    private static string Describe(DurableRecord r) => r switch
    {
        DecisionRecord d => $"decision {d.ConsensusId} {d.Value.Hash}",
        PreparedRecord p => $"prepared {p.Certificate.ConsensusId} {p.Certificate.BatchHash} {p.Certificate.Value?.Hash}",
        CheckpointRecord c => $"checkpoint {c.ConsensusId} {c.StateHash} {Convert.ToHexString(c.State)}",
        RegencyRecord g => $"regency {g.Regency}",
        _ => r.GetType().Name,
    };
}
