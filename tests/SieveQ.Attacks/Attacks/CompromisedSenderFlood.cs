using SieveQ.Deployment;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;

namespace SieveQ.Attacks.Attacks;

/// <summary>
/// compromised-sender: an enrolled sender whose host was taken over floods with messages carrying its real signature
/// and real MACs, far over its grant, to every pre-SQ. Each message is signed as it is sent (numbered from 1 up, so
/// nothing is a replay). With countermeasures on, every pre-SQ's grant per sender is set to twice what a legitimate
/// sender offers; without, it stays at the pre-SQ's default, which this flood stays under.
/// </summary>
internal sealed class CompromisedSenderFlood(int rate, bool countermeasures, int legitimatePerSender) : Attack
{
    /// <summary>The attacker's identity: enrolled beside the legitimate senders.</summary>
    public const int Sender = 3;

    private readonly PreSqFloodStreams _streams = new(rate);
    private readonly byte[] _data = new byte[500];
    // One signing key, written to from each pre-SQ's flood task.
    private readonly Lock _signing = new();
    private PartyKeys? _keys;
    private long _seq;

    public long Grant => Math.Max(100, 2L * legitimatePerSender);

    public override string Description => $"enrolled sender {Sender}, compromised, floods validly signed messages to every pre-SQ ({PresignedMessages} signed ahead, then as it goes)";

    public override string Countermeasure => countermeasures
        ? $"each pre-SQ's grant per sender ({Grant} msg/s): frames over it are dropped (drop.*.GrantExceeded) before the ordering; the replicas quarantine the sender for its overruns and the pre-SQs follow them (drop.Whitelist.Quarantined)"
        : "none: the pre-SQs keep their default grant (10,000 msg/s per sender)";

    public override DeploymentShape Shape => new([Sender], null, countermeasures
        ? ["--grant-rate", Grant.ToString(System.Globalization.CultureInfo.InvariantCulture), "--grant-burst", Grant.ToString(System.Globalization.CultureInfo.InvariantCulture)]
        : []);

    public override long Applied => _streams.Written;

    /// <summary>Messages signed during the warm-up: the flood starts at its rate, not at what one core signs under load.</summary>
    private const int PresignedMessages = 10_000;

    private readonly Queue<byte[]> _presigned = new();

    public override Task PrepareAsync(AttackTarget target, CancellationToken ct)
    {
        _keys = target.Context.Keys(PartyRole.Sender, Sender);
        var signing = _keys.Signing ?? throw new InvalidOperationException($"sender {Sender} has no signing key");
        for (var i = 0; i < PresignedMessages && !ct.IsCancellationRequested; i++)
        {
            _presigned.Enqueue(Sign(signing));
        }
        return Task.CompletedTask;
    }

    public override async Task RunAsync(AttackTarget target, CancellationToken stop)
    {
        var keys = _keys ?? throw new InvalidOperationException("not prepared");
        var signing = keys.Signing!;
        var rings = target.Config.PreSqs.ToDictionary(p => p.Id, p => keys.Ring(MacChannel.SenderPreSq, p.Id)!);
        byte[] Frame(int preSq)
        {
            byte[]? message;
            lock (_signing)
            {
                message = _presigned.TryDequeue(out var m) ? m : Sign(signing);
            }
            return SenderFrameCodec.Encode(preSq, message, rings[preSq]);
        }
        await _streams.RunAsync(target.Config, Frame, stop).ConfigureAwait(false);
    }

    /// <summary>The next message in sequence, signed; called under <see cref="_signing"/> or before the flood starts.</summary>
    private byte[] Sign(System.Security.Cryptography.ECDsa signing) =>
        SenderMessageCodec.SignSingle(SenderMessageCodec.EncodeSignedRegion(Sender, ++_seq, AttackSettings.Receiver, _data), signing);

    public override async Task<IReadOnlyDictionary<string, long>> CountermeasureAsync(AttackTarget target, CancellationToken ct) =>
        new Dictionary<string, long>(StringComparer.Ordinal)
        {
            ["pre-sq drop.*.GrantExceeded"] = await SumCountersAsync(target.Config, "pre-sq", ".GrantExceeded", ct).ConfigureAwait(false),
            ["pre-sq frames_shed"] = await SumCountersAsync(target.Config, "pre-sq", "frames_shed", ct).ConfigureAwait(false),
            ["pre-sq frames_received"] = await SumCountersAsync(target.Config, "pre-sq", "frames_received", ct).ConfigureAwait(false),
            ["replica drop.*.GrantExceeded"] = await SumCountersAsync(target.Config, "replica-sq", ".GrantExceeded", ct).ConfigureAwait(false),
            ["replica drop.*.Quarantined"] = await SumCountersAsync(target.Config, "replica-sq", "ReplicaAdmission.Quarantined", ct).ConfigureAwait(false),
            ["pre-sq quarantines_followed"] = await SumCountersAsync(target.Config, "pre-sq", "quarantines_followed", ct).ConfigureAwait(false),
            ["pre-sq drop.Whitelist.Quarantined"] = await SumCountersAsync(target.Config, "pre-sq", "Whitelist.Quarantined", ct).ConfigureAwait(false),
        };

    public override ValueTask DisposeAsync()
    {
        _keys?.Dispose();
        return ValueTask.CompletedTask;
    }
}
