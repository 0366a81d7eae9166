using System.Diagnostics;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace SieveQ.Cli.Bench;

/// <summary>One row of the C benchmark: classification cost at one rule count, hashed and linear.</summary>
internal sealed record ClassifierFigures(
    [property: JsonPropertyName("rules")] int Rules,
    [property: JsonPropertyName("hashed_ns")] double HashedNs,
    [property: JsonPropertyName("linear_ns")] double LinearNs);

/// <summary>What driver/bench/bench.c writes (build/bench.json).</summary>
internal sealed record DriverBenchFigures(
    [property: JsonPropertyName("classifier")] IReadOnlyList<ClassifierFigures> Classifier,
    [property: JsonPropertyName("bucket_ns")] double BucketNs,
    [property: JsonPropertyName("packet_ns")] double PacketNs,
    [property: JsonPropertyName("flow_bytes")] double FlowBytes,
    [property: JsonPropertyName("mb_per_million_flows")] double MbPerMillionFlows);

/// <summary>
/// Builds and runs the driver core's own benchmark (C, the same code as the kernel driver) from the source
/// checkout the CLI runs in. The figures come from C because the classifier's cost is the C core's.
/// </summary>
internal static class DriverBench
{
    /// <summary>driver/ of the checkout above any of the start directories, or null.</summary>
    public static string? FindDriverDirectory(params string[] starts)
    {
        foreach (string start in starts)
        {
            for (var dir = new DirectoryInfo(start); dir is not null; dir = dir.Parent)
            {
                if (File.Exists(Path.Combine(dir.FullName, "driver", "Makefile")))
                {
                    return Path.Combine(dir.FullName, "driver");
                }
            }
        }
        return null;
    }

    public static async Task<DriverBenchFigures> RunAsync(string driverDir, TextWriter log, CancellationToken ct)
    {
        // make rebuilds only what changed; on a fresh clone this compiles the core once (a few seconds).
        var (makeCode, makeOutput) = await RunProcessAsync("make", ["-C", driverDir, "build/bench"], driverDir, ct).ConfigureAwait(false);
        if (makeCode != 0)
        {
            throw new InvalidOperationException($"make -C {driverDir} build/bench failed (exit {makeCode}):\n{makeOutput}");
        }
        string json = Path.Combine(Path.GetTempPath(), $"sieveq-bench-fw-{Environment.ProcessId}.json");
        try
        {
            await log.WriteLineAsync("running driver/build/bench (best of 5 rounds per rule count; about 10 s) ...").ConfigureAwait(false);
            var (code, output) = await RunProcessAsync(Path.Combine(driverDir, "build", "bench"), [json], driverDir, ct).ConfigureAwait(false);
            if (code != 0 || !File.Exists(json))
            {
                throw new InvalidOperationException($"driver/build/bench failed (exit {code}):\n{output}");
            }
            return Parse(await File.ReadAllTextAsync(json, ct).ConfigureAwait(false));
        }
        finally
        {
            File.Delete(json);
        }
    }

    internal static DriverBenchFigures Parse(string json)
    {
        var figures = JsonSerializer.Deserialize<DriverBenchFigures>(json)
            ?? throw new InvalidOperationException("the driver benchmark wrote no figures");
        if (figures.Classifier is not { Count: > 0 } || figures.Classifier.Any(c => c.Rules < 1 || c.HashedNs <= 0 || c.LinearNs <= 0))
        {
            throw new InvalidOperationException("the driver benchmark's classifier figures are missing or not positive");
        }
        return figures;
    }

    private static async Task<(int Code, string Output)> RunProcessAsync(string file, IEnumerable<string> args, string cwd, CancellationToken ct)
    {
        var info = new ProcessStartInfo(file)
        {
            WorkingDirectory = cwd,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string a in args)
        {
            info.ArgumentList.Add(a);
        }
        Process process;
        try
        {
            process = Process.Start(info) ?? throw new InvalidOperationException($"cannot start {file}");
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            throw new InvalidOperationException($"cannot start {file}: {e.Message} (the benchmark needs make and a C compiler)", e);
        }
        using (process)
        {
            var stdout = process.StandardOutput.ReadToEndAsync(ct);
            var stderr = process.StandardError.ReadToEndAsync(ct);
            await process.WaitForExitAsync(ct).ConfigureAwait(false);
            return (process.ExitCode, await stdout.ConfigureAwait(false) + await stderr.ConfigureAwait(false));
        }
    }
}
