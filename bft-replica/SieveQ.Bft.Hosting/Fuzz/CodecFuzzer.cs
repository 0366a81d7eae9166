using System.Buffers;
using SieveQ.Bft.Codec;
using SieveQ.Bft.Hosting.Transport;
using SieveQ.Bft.Protocol;

namespace SieveQ.Bft.Hosting.Fuzz;

public sealed record FuzzReport(long Iterations, long Accepted, long Rejected, IReadOnlyList<string> Failures)
{
    public bool Passed => Failures.Count == 0;
}

/// <summary>
/// Feeds random and mutated inputs to the message decoder and to the frame reader. The contract under
/// test: the decoder either returns a message or throws <see cref="MalformedMessageException"/>; the frame
/// reader either yields frames, asks for more bytes, or throws <see cref="MalformedMessageException"/>;
/// frame authentication returns false rather than throwing. Anything else is a failure, reported with the
/// seed and iteration that reproduce it.
/// </summary>
public static class CodecFuzzer
{
    public static FuzzReport Run(long iterations, int seed)
    {
        var rng = new Random(seed);
        var seeds = SampleMessages.All(rng).Select(MessageCodec.Encode).ToArray();
        var keys = new DirectionKeys(new byte[DirectionKeys.KeyBytes], new byte[DirectionKeys.IvBytes]);
        rng.NextBytes(keys.Key);
        rng.NextBytes(keys.Iv);
        using var sealCipher = new FrameCipher(keys);
        using var openCipher = new FrameCipher(keys);
        ulong sequence = 0;
        var failures = new List<string>();
        long accepted = 0, rejected = 0;
        for (long i = 0; i < iterations && failures.Count < 20; i++)
        {
            var input = i % 8 == 0 ? Random(rng) : Mutate(rng, seeds[rng.Next(seeds.Length)], seeds);
            try
            {
                var m = MessageCodec.Decode(input);
                // Whatever decodes must re-encode and decode again: the canonical form is stable.
                _ = MessageCodec.Decode(MessageCodec.Encode(m));
                // A decoded batch's hash is taken over the bytes it was read from; that is only sound
                // while those bytes are the one canonical encoding of what was read.
                foreach (var b in BatchesIn(m))
                {
                    if (b.Hash != Digest.Compute(BatchCodec.Encode(b)))
                    {
                        failures.Add($"batch hash seed={seed} iteration={i}: decoded hash differs from the canonical encoding's");
                    }
                }
                // Sharing payloads already held (some of them altered) must not change what decodes.
                if (m is Propose && !MessageCodec.Encode(MessageCodec.Decode(input, KnownFrom(rng, m))).AsSpan().SequenceEqual(MessageCodec.Encode(m)))
                {
                    failures.Add($"shared payloads seed={seed} iteration={i}: the decode differs from the plain one");
                }
                accepted++;
            }
            catch (MalformedMessageException)
            {
                rejected++;
            }
            catch (Exception e)
            {
                failures.Add($"decode seed={seed} iteration={i}: {e.GetType().Name}: {e.Message}");
            }

            try
            {
                FrameRound(rng, input, sealCipher, openCipher, sequence++);
            }
            catch (MalformedMessageException)
            {
                rejected++;
            }
            catch (Exception e)
            {
                failures.Add($"frame seed={seed} iteration={i}: {e.GetType().Name}: {e.Message}");
            }
        }
        return new FuzzReport(iterations, accepted, rejected, failures);
    }

    /// <summary>The requests of a decoded message as payloads received from clients, one in four with a byte flipped.</summary>
    private static KnownRequestPayloads KnownFrom(Random rng, BftMessage m)
    {
        var known = new KnownRequestPayloads();
        foreach (var q in BatchesIn(m).SelectMany(b => b.Requests))
        {
            var copy = q.Payload.ToArray();
            if (copy.Length > 0 && rng.Next(4) == 0)
            {
                copy[rng.Next(copy.Length)] ^= 0x40;
            }
            known.Remember(q.From, q.Sequence, copy);
        }
        return known;
    }

    /// <summary>Every batch a message carries: proposed values, synchronisation values, certificates, a state reply's log.</summary>
    private static IEnumerable<Batch> BatchesIn(BftMessage m)
    {
        var certificates = m switch
        {
            StopData sd => sd.Certificates,
            Sync sy => sy.Evidence.SelectMany(e => e.Certificates),
            _ => [],
        };
        var values = m switch
        {
            Propose p => [p.Value],
            Sync { Value: { } v } => [v],
            StateReply r => r.Log.Select(l => l.Value),
            _ => [],
        };
        return values.Concat(certificates.Select(c => c.Value)).OfType<Batch>();
    }

    /// <summary>Seals the input as a frame, damages the stream, and runs the reader and authenticator over it.</summary>
    /// <summary>Each round seals under its own sequence, so the fuzzer, too, never reuses a nonce.</summary>
    private static void FrameRound(Random rng, byte[] payload, FrameCipher sealCipher, FrameCipher openCipher, ulong sequence)
    {
        // A body of one or two message records; the mutations below damage records, lengths and tags.
        var records = new List<byte[]> { payload.Length > 0 ? payload : [0] };
        if (payload.Length > 0 && rng.Next(2) == 0)
        {
            records.Add(payload);
        }
        var frame = new byte[FrameCodec.Overhead + records.Sum(r => FrameCodec.RecordHeaderBytes + r.Length)];
        var body = FrameCodec.BodyOf(frame);
        foreach (var r in records)
        {
            body = body[FrameCodec.WriteRecord(body, r)..];
        }
        FrameCodec.SealInPlace(frame, sequence, sealCipher);
        var stream = rng.Next(4) switch
        {
            0 => frame,
            1 => Mutate(rng, frame, [frame]),
            2 => Random(rng),
            _ => [.. frame, .. Mutate(rng, frame, [frame])],
        };
        // Split into random segments, as a socket would deliver it.
        var seq = Segments(rng, stream);
        while (FrameCodec.TryReadFrame(ref seq, out var f))
        {
            var bytes = f.ToArray();
            if (FrameCodec.TryOpen(bytes, sequence, openCipher, FrameCodec.BodyOf(bytes)))
            {
                ReadOnlySpan<byte> inner = FrameCodec.BodyOf(bytes);
                while (FrameCodec.TryNextRecord(ref inner, out var message))
                {
                    _ = MessageCodec.Decode(message);
                }
            }
        }
    }

    private static ReadOnlySequence<byte> Segments(Random rng, byte[] data)
    {
        if (data.Length < 2 || rng.Next(2) == 0)
        {
            return new ReadOnlySequence<byte>(data);
        }
        var cut = rng.Next(1, data.Length);
        var first = new Segment(data.AsMemory(0, cut), 0);
        var last = first.Append(data.AsMemory(cut));
        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        public Segment Append(ReadOnlyMemory<byte> memory)
        {
            var next = new Segment(memory, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }

    private static byte[] Random(Random rng)
    {
        var b = new byte[rng.Next(0, 256)];
        rng.NextBytes(b);
        if (b.Length > 1 && rng.Next(2) == 0)
        {
            b[0] = MessageCodec.Version;  // get past the version check more often
            b[1] = (byte)rng.Next(0, 16);
        }
        return b;
    }

    internal static byte[] Mutate(Random rng, byte[] original, byte[][] pool)
    {
        var b = (byte[])original.Clone();
        var rounds = rng.Next(1, 4);
        for (var r = 0; r < rounds; r++)
        {
            if (b.Length == 0)
            {
                return Random(rng);
            }
            switch (rng.Next(7))
            {
                case 0: // flip a bit
                    b[rng.Next(b.Length)] ^= (byte)(1 << rng.Next(8));
                    break;
                case 1: // interesting byte
                    b[rng.Next(b.Length)] = (byte)(rng.Next(4) switch { 0 => 0, 1 => 0xFF, 2 => 0x7F, _ => 0x80 });
                    break;
                case 2: // truncate
                    b = b[..rng.Next(b.Length)];
                    break;
                case 3: // extend
                    var extra = Random(rng);
                    b = [.. b, .. extra.AsSpan(0, Math.Min(8, extra.Length))];
                    break;
                case 4: // overwrite a 32-bit field with an edge value (lengths, counts)
                    if (b.Length >= 4)
                    {
                        var at = rng.Next(b.Length - 3);
                        var v = rng.Next(5) switch { 0 => -1, 1 => int.MaxValue, 2 => 0, 3 => 65_536, _ => rng.Next() };
                        BitConverter.TryWriteBytes(b.AsSpan(at), v);
                    }
                    break;
                case 5: // splice with another seed
                    var other = pool[rng.Next(pool.Length)];
                    var cut = rng.Next(b.Length);
                    b = [.. b.AsSpan(0, cut), .. other.AsSpan(Math.Min(cut, other.Length))];
                    break;
                default: // duplicate a chunk
                    var start = rng.Next(b.Length);
                    var len = rng.Next(1, Math.Min(16, b.Length - start) + 1);
                    b = [.. b.AsSpan(0, start + len), .. b.AsSpan(start)];
                    break;
            }
        }
        return b;
    }
}
