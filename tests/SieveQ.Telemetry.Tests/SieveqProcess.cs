using System.Diagnostics;
using System.Reflection;

namespace SieveQ.Telemetry.Tests;

/// <summary>The built `sieveq` (its dll, run with `dotnet`) as the tests start it.</summary>
internal static class SieveqProcess
{
    public static string Dll => Metadata("SieveqDll");

    public static string DashboardJson => Metadata("DashboardJson");

    public static ProcessStartInfo StartInfo(IEnumerable<string> args, IReadOnlyDictionary<string, string>? environment = null)
    {
        if (!File.Exists(Dll))
        {
            throw new FileNotFoundException($"build the CLI first: {Dll} is missing");
        }
        var psi = new ProcessStartInfo("dotnet") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        psi.ArgumentList.Add(Dll);
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        // A collector configured in the test runner's environment must not leak into the components.
        psi.Environment.Remove("OTEL_EXPORTER_OTLP_ENDPOINT");
        psi.Environment.Remove("OTEL_EXPORTER_OTLP_PROTOCOL");
        psi.Environment.Remove("OTEL_METRIC_EXPORT_INTERVAL");
        foreach (var (k, v) in environment ?? new Dictionary<string, string>())
        {
            psi.Environment[k] = v;
        }
        return psi;
    }

    /// <summary>Runs a command that is expected to end by itself within <paramref name="timeout"/>.</summary>
    public static async Task<(int ExitCode, string Stdout, string Stderr)> RunAsync(IEnumerable<string> args, TimeSpan timeout,
        IReadOnlyDictionary<string, string>? environment = null)
    {
        using var process = Process.Start(StartInfo(args, environment))!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        using var cts = new CancellationTokenSource(timeout);
        try
        {
            await process.WaitForExitAsync(cts.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"sieveq {string.Join(' ', args)} did not end within {timeout}");
        }
        return (process.ExitCode, await stdout, await stderr);
    }

    private static string Metadata(string key) =>
        typeof(SieveqProcess).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == key).Value!;
}
