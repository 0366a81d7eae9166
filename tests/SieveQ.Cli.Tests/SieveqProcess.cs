using System.Diagnostics;

namespace SieveQ.Cli.Tests;

/// <summary>The real `sieveq` of this build (sieveq.dll beside the tests) as a child process.</summary>
internal static class SieveqProcess
{
    /// <param name="dll">Another sieveq.dll than the one beside the tests (one built with the console beside it).</param>
    public static ProcessStartInfo Info(IEnumerable<string> args, IReadOnlyDictionary<string, string>? environment = null, string? dll = null)
    {
        var info = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        info.ArgumentList.Add(dll ?? Path.Combine(AppContext.BaseDirectory, "sieveq.dll"));
        foreach (var a in args)
        {
            info.ArgumentList.Add(a);
        }
        foreach (var (name, value) in environment ?? new Dictionary<string, string>())
        {
            info.Environment[name] = value;
        }
        return info;
    }

    /// <summary>Runs to completion (at most two minutes) and returns the exit code and both outputs.</summary>
    public static async Task<(int Code, string Stdout, string Stderr)> RunAsync(IEnumerable<string> args, IReadOnlyDictionary<string, string>? environment = null)
    {
        using var process = Process.Start(Info(args, environment))!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        using var limit = new CancellationTokenSource(TimeSpan.FromMinutes(2));
        await process.WaitForExitAsync(limit.Token);
        return (process.ExitCode, await stdout, await stderr);
    }
}
