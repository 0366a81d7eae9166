using System.Globalization;

namespace SieveQ.Attacks.Attacks;

/// <summary>A compromising stage the benchmark switches on for the attack's window, and what it did meanwhile.</summary>
internal interface ISwitchedStage
{
    bool Active { get; set; }

    long Applied { get; }
}

/// <summary>
/// How the benchmark switches a compromised component's attack across processes: a file the attack creates for its
/// window and removes after it. The component's process follows it four times a second and writes its stage's count
/// next to it, aside and renamed, so that the benchmark never reads half a number.
/// </summary>
internal static class AttackSwitch
{
    private static readonly TimeSpan FollowInterval = TimeSpan.FromMilliseconds(250);

    /// <summary>The attack's side: the switch is on until <paramref name="stop"/> (the window's end), then off.</summary>
    public static async Task HoldOnAsync(string switchFile, CancellationToken stop)
    {
        Directory.CreateDirectory(Path.GetDirectoryName(switchFile)!);
        await File.WriteAllTextAsync(switchFile, "on", CancellationToken.None).ConfigureAwait(false);
        try
        {
            await Task.Delay(Timeout.InfiniteTimeSpan, stop).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // the window ended
        }
        finally
        {
            File.Delete(switchFile);
        }
    }

    /// <summary>
    /// The component's side: follows the switch until stopped or the host ends, then writes the final count.
    /// <paramref name="more"/> are further tallies of the stage, each written to its own file the same way.
    /// </summary>
    public static async Task FollowAsync(string switchFile, string countFile, ISwitchedStage stage, Task hostCompletion, CancellationToken stop,
        IReadOnlyList<(string File, Func<long> Read)>? more = null)
    {
        more ??= [];
        try
        {
            while (!stop.IsCancellationRequested && !hostCompletion.IsCompleted)
            {
                var active = File.Exists(switchFile);
                if (active != stage.Active)
                {
                    stage.Active = active;
                    await Console.Out.WriteLineAsync($"attack {(active ? "on" : "off")} ({Path.GetFileName(switchFile)})").ConfigureAwait(false);
                }
                await WriteCountAsync(countFile, stage.Applied).ConfigureAwait(false);
                foreach (var (file, read) in more)
                {
                    await WriteCountAsync(file, read()).ConfigureAwait(false);
                }
                await Task.Delay(FollowInterval, stop).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // stopped by the launcher
        }
        await WriteCountAsync(countFile, stage.Applied).ConfigureAwait(false);
        foreach (var (file, read) in more)
        {
            await WriteCountAsync(file, read()).ConfigureAwait(false);
        }
    }

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

    private static async Task WriteCountAsync(string path, long count)
    {
        var temp = path + ".tmp";
        await File.WriteAllTextAsync(temp, count.ToString(CultureInfo.InvariantCulture)).ConfigureAwait(false);
        File.Move(temp, path, overwrite: true);
    }
}
