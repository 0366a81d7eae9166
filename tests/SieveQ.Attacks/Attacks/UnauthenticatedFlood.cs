using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;

namespace SieveQ.Attacks.Attacks;

/// <summary>
/// unauthenticated-flood: well-formed sender frames in the legitimate senders' names, signed and MACed with keys the
/// attacker made up, sent as fast as the attack rate says to every pre-SQ. The frames are made once (an attacker
/// without keys spends nothing per frame); the pre-SQ's MAC check is what stands between them and the ordering.
/// </summary>
internal sealed class UnauthenticatedFlood : Attack
{
    private const int Distinct = 512;
    private readonly PreSqFloodStreams _streams;
    private readonly Dictionary<int, byte[][]> _frames = [];
    private long _next;

    public UnauthenticatedFlood(int rate) => _streams = new PreSqFloodStreams(rate);

    public override string Description => "frames in the legitimate senders' names with MACs from keys the attacker made up, flooded to every pre-SQ";

    public override string Countermeasure => "the pre-SQ checks each frame's MAC before anything else and drops it (drop.*.BadMac); legitimate senders are not penalised";

    public override long Applied => _streams.Written;

    public override async Task RunAsync(AttackTarget target, CancellationToken stop)
    {
        using var signing = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var ring = new MacKeyRing(1, RandomNumberGenerator.GetBytes(MacKeyRing.KeyBytes));
        foreach (var p in target.Config.PreSqs)
        {
            _frames[p.Id] = Enumerable.Range(0, Distinct).Select(i =>
            {
                var sender = AttackSettings.LegitimateSenders[i % AttackSettings.LegitimateSenders.Count];
                var region = SenderMessageCodec.EncodeSignedRegion(sender, 1_000_000 + i, AttackSettings.Receiver, RandomNumberGenerator.GetBytes(500));
                return SenderFrameCodec.Encode(p.Id, SenderMessageCodec.SignSingle(region, signing), ring);
            }).ToArray();
        }
        await _streams.RunAsync(target.Config, id => _frames[id][Interlocked.Increment(ref _next) % Distinct], stop).ConfigureAwait(false);
    }

    public override async Task<IReadOnlyDictionary<string, long>> CountermeasureAsync(AttackTarget target, CancellationToken ct) =>
        new Dictionary<string, long>(StringComparer.Ordinal)
        {
            ["pre-sq drop.*.BadMac"] = await SumCountersAsync(target.Config, "pre-sq", ".BadMac", ct).ConfigureAwait(false),
            ["pre-sq frames_shed"] = await SumCountersAsync(target.Config, "pre-sq", "frames_shed", ct).ConfigureAwait(false),
            ["pre-sq frames_received"] = await SumCountersAsync(target.Config, "pre-sq", "frames_received", ct).ConfigureAwait(false),
            ["attacker streams reopened"] = _streams.Reopened,
        };
}
