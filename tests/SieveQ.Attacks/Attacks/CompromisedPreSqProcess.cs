using System.Globalization;
using System.Runtime.InteropServices;
using SieveQ.Deployment;
using SieveQ.PreSq;

namespace SieveQ.Attacks.Attacks;

/// <summary>
/// `SieveQ.Attacks compromised-pre-sq`: the real pre-SQ host with a compromising stage, as a process of its own in
/// place of `sieveq pre-sq`. The attack is switched on and off by a file the benchmark creates and removes
/// (<see cref="SwitchPath"/>); the stage's count is written to <see cref="CountPath"/> four times a second.
/// Stops on SIGTERM or Ctrl-C, as the launcher stops components.
/// </summary>
internal static class CompromisedPreSqProcess
{
    public const string Command = "compromised-pre-sq";

    public static string SwitchPath(string deployment, int id) => Path.Combine(deployment, "attack", $"pre-sq-{id}.on");

    public static string CountPath(string deployment, int id) => Path.Combine(deployment, "attack", $"pre-sq-{id}.applied");

    public static IReadOnlyList<string> Args(string deployment, int id, string stage) =>
        [Command, deployment, id.ToString(CultureInfo.InvariantCulture), stage];

    public static async Task<int> RunAsync(IReadOnlyList<string> args)
    {
        if (args.Count != 3 || !int.TryParse(args[1], NumberStyles.None, CultureInfo.InvariantCulture, out var id)
            || CompromisingStage.Named(args[2]) is not { } stage)
        {
            await Console.Error.WriteLineAsync($"usage: {Command} <deployment dir> <pre-SQ id> tampering|dropping").ConfigureAwait(false);
            return 2;
        }
        var deployment = args[0];
        Directory.CreateDirectory(Path.Combine(deployment, "attack"));
        using var stop = new CancellationTokenSource();
        using var term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, c => { c.Cancel = true; stop.Cancel(); });
        using var interrupt = PosixSignalRegistration.Create(PosixSignal.SIGINT, c => { c.Cancel = true; stop.Cancel(); });
        await using var host = PreSqHost.Create(DeploymentContext.Load(deployment), id, passed: stage);
        await host.StartAsync(stop.Token).ConfigureAwait(false);
        await Console.Out.WriteLineAsync($"compromised pre-sq {id} ({args[2]}) listening on {host.Address}").ConfigureAwait(false);
        await AttackSwitch.FollowAsync(SwitchPath(deployment, id), CountPath(deployment, id), stage, host.Completion, stop.Token).ConfigureAwait(false);
        return host.Completion.IsFaulted ? 2 : 0;
    }

    public static long ReadCount(string deployment, int id) => AttackSwitch.ReadCount(CountPath(deployment, id));
}
