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
        var switchFile = SwitchPath(deployment, id);
        var countFile = CountPath(deployment, id);
        try
        {
            while (!stop.IsCancellationRequested && !host.Completion.IsCompleted)
            {
                var active = File.Exists(switchFile);
                if (active != stage.Active)
                {
                    stage.Active = active;
                    await Console.Out.WriteLineAsync($"attack {(active ? "on" : "off")}").ConfigureAwait(false);
                }
                await WriteCountAsync(countFile, stage.Applied).ConfigureAwait(false);
                await Task.Delay(TimeSpan.FromMilliseconds(250), stop.Token).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // stopped by the launcher
        }
        await WriteCountAsync(countFile, stage.Applied).ConfigureAwait(false);
        return host.Completion.IsFaulted ? 2 : 0;
    }

    /// <summary>Written aside and renamed, so the benchmark never reads half a number.</summary>
    internal static async Task WriteCountAsync(string path, long count)
    {
        var temp = path + ".tmp";
        await File.WriteAllTextAsync(temp, count.ToString(CultureInfo.InvariantCulture)).ConfigureAwait(false);
        File.Move(temp, path, overwrite: true);
    }

    public static long ReadCount(string deployment, int id) => ReadCount(CountPath(deployment, id));

    public static long ReadCount(string path)
    {
        try
        {
            return long.TryParse(File.ReadAllText(path), NumberStyles.None, CultureInfo.InvariantCulture, out var n) ? n : 0;
        }
        catch (IOException)
        {
            return 0;
        }
    }
}
