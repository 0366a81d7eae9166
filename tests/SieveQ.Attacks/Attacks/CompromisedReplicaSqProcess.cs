using System.Globalization;
using System.Runtime.InteropServices;
using SieveQ.Deployment;
using SieveQ.ReplicaSq;
using SieveQ.Sieve.Replica;

namespace SieveQ.Attacks.Attacks;

/// <summary>
/// `SieveQ.Attacks compromised-replica-sq`: the real replica-SQ host with two compromising stages plugged into its
/// output, as a process of its own in place of `sieveq replica-sq`: <see cref="CorruptingBodies"/>
/// (<see cref="IOutputBodyStage"/>) and <see cref="WithholdingOutputs"/> (<see cref="IReceiverOutputGate"/>); the
/// product leaves both unset. It orders and executes honestly; while the corrupting switch file exists, what it
/// streams to receivers carries other bytes behind the agreed digests (byzantine-replica); while the withholding one
/// exists, it sends receivers nothing at all (withholding-replica). Each switch is followed, and each count written to
/// a file, four times a second, as <see cref="CompromisedPreSqProcess"/> does; the two kinds can share a deployment.
/// </summary>
internal static class CompromisedReplicaSqProcess
{
    public const string Command = "compromised-replica-sq";

    public static string SwitchPath(string deployment, int id) => Path.Combine(deployment, "attack", $"replica-sq-{id}.on");

    public static string CountPath(string deployment, int id) => Path.Combine(deployment, "attack", $"replica-sq-{id}.applied");

    public static string WithholdingSwitchPath(string deployment, int id) => Path.Combine(deployment, "attack", $"replica-sq-{id}.withholding.on");

    public static string WithheldCountPath(string deployment, int id) => Path.Combine(deployment, "attack", $"replica-sq-{id}.withheld");

    public static string FetchesHeldCountPath(string deployment, int id) => Path.Combine(deployment, "attack", $"replica-sq-{id}.fetches-held");

    public static IReadOnlyList<string> Args(string deployment, int id) => [Command, deployment, id.ToString(CultureInfo.InvariantCulture)];

    public static async Task<int> RunAsync(IReadOnlyList<string> args)
    {
        if (args.Count != 2 || !int.TryParse(args[1], NumberStyles.None, CultureInfo.InvariantCulture, out var id))
        {
            await Console.Error.WriteLineAsync($"usage: {Command} <deployment dir> <replica-SQ id>").ConfigureAwait(false);
            return 2;
        }
        var deployment = args[0];
        Directory.CreateDirectory(Path.Combine(deployment, "attack"));
        using var stop = new CancellationTokenSource();
        using var term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, c => { c.Cancel = true; stop.Cancel(); });
        using var interrupt = PosixSignalRegistration.Create(PosixSignal.SIGINT, c => { c.Cancel = true; stop.Cancel(); });
        var corrupting = new CorruptingBodies();
        var withholding = new WithholdingOutputs();
        await using var host = ReplicaSqHost.Create(DeploymentContext.Load(deployment), id, bodies: corrupting, receiverGate: withholding);
        await host.StartAsync(stop.Token).ConfigureAwait(false);
        await Console.Out.WriteLineAsync($"compromised replica-sq {id} (corrupting or withholding its outputs) listening on {host.Address}").ConfigureAwait(false);
        await Task.WhenAll(
            AttackSwitch.FollowAsync(SwitchPath(deployment, id), CountPath(deployment, id), corrupting, host.Completion, stop.Token),
            AttackSwitch.FollowAsync(WithholdingSwitchPath(deployment, id), WithheldCountPath(deployment, id), withholding, host.Completion, stop.Token,
                [(FetchesHeldCountPath(deployment, id), () => withholding.FetchesHeld)])).ConfigureAwait(false);
        return host.Completion.IsFaulted ? 2 : 0;
    }
}

/// <summary>While <see cref="Active"/>, flips the last byte of every message body the replica-SQ streams (an empty body becomes one byte): the agreed digests stay, the bytes behind them do not match.</summary>
internal sealed class CorruptingBodies : IOutputBodyStage, ISwitchedStage
{
    private long _applied;
    private volatile bool _active;

    public long Applied => Interlocked.Read(ref _applied);

    public bool Active
    {
        get => _active;
        set => _active = value;
    }

    public OutboxBatch Stream(OutboxBatch agreed)
    {
        if (!_active)
        {
            return agreed;
        }
        return agreed with
        {
            Items = agreed.Items.Select(i =>
            {
                Interlocked.Increment(ref _applied);
                var data = i.Data.Length == 0 ? [0xFF] : (byte[])i.Data.Clone();
                // The last byte: in the benchmark's payloads it is filler the receiver checks (the first bytes are the send timestamp, which it cannot).
                data[^1] ^= 0xFF;
                return i with { Data = data };
            }).ToList(),
        };
    }
}
