using System.Diagnostics;
using System.Text.RegularExpressions;

namespace SieveQ.Telemetry.Tests;

/// <summary>
/// `sieveq up` as a real process (4 replica-SQs, 2 pre-SQs, the agent, the controller, the demo sender and
/// receiver, each its own process) exporting over OTLP to an <see cref="OtlpReceiver"/> every second, with its
/// printed scrape URLs. Shared by the tests of one class; stopped with SIGTERM, as Ctrl-C would.
/// </summary>
public sealed partial class UpDeployment : IAsyncLifetime
{
    private readonly List<string> _lines = [];
    private readonly string _directory = Directory.CreateTempSubdirectory("sieveq-otel-").FullName;
    private Process? _up;
    private OtlpReceiver? _receiver;

    internal OtlpReceiver Receiver => _receiver!;

    /// <summary>Process name → its scrape URL, as `up` printed them.</summary>
    public Dictionary<string, Uri> ScrapeUrls { get; } = [];

    /// <summary>Pre-SQ process name → its gRPC URL.</summary>
    public Dictionary<string, Uri> PreSqUrls { get; } = [];

    public string Output
    {
        get
        {
            lock (_lines)
            {
                return string.Join('\n', _lines);
            }
        }
    }

    public async Task InitializeAsync()
    {
        _receiver = await OtlpReceiver.StartAsync();
        var psi = SieveqProcess.StartInfo(
            ["up", "--dir", _directory, "--fresh", "--rate", "200", "--duration", "300s", "--otlp-endpoint", _receiver.Url.ToString()],
            new Dictionary<string, string> { ["OTEL_METRIC_EXPORT_INTERVAL"] = "1000" });
        _up = Process.Start(psi)!;
        _up.OutputDataReceived += (_, e) => Add(e.Data);
        _up.ErrorDataReceived += (_, e) => Add(e.Data);
        _up.BeginOutputReadLine();
        _up.BeginErrorReadLine();
        // Healthy, then messages delivered end to end (the live line's total above zero).
        await WaitForAsync(o => o.Contains("all components healthy", StringComparison.Ordinal), TimeSpan.FromSeconds(150));
        await WaitForAsync(o => DeliveredLine().Matches(o).Any(m => long.Parse(m.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture) > 0),
            TimeSpan.FromSeconds(60));
        foreach (Match m in ScrapeLine().Matches(Output))
        {
            ScrapeUrls[m.Groups[1].Value] = new Uri(m.Groups[2].Value);
        }
        foreach (Match m in PreSqLine().Matches(Output))
        {
            PreSqUrls[m.Groups[1].Value] = new Uri(m.Groups[2].Value);
        }
    }

    private void Add(string? line)
    {
        if (line is null)
        {
            return;
        }
        lock (_lines)
        {
            _lines.Add(line);
        }
    }

    private async Task WaitForAsync(Func<string, bool> condition, TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (!condition(Output))
        {
            if (_up!.HasExited || DateTime.UtcNow > deadline)
            {
                throw new InvalidOperationException($"sieveq up: not there within {timeout} (exited: {_up.HasExited}); output:\n{Output}");
            }
            await Task.Delay(250);
        }
    }

    public async Task DisposeAsync()
    {
        if (_up is { HasExited: false } up)
        {
            var components = ComponentPids();
            using (var term = Process.Start("kill", ["-TERM", up.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]))
            {
                await term.WaitForExitAsync();
            }
            // `up` stops its ten processes one after another, each with a grace and a kill wait: slow on a loaded machine.
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(150));
            try
            {
                await up.WaitForExitAsync(cts.Token);
            }
            catch (OperationCanceledException)
            {
                up.Kill(entireProcessTree: true);
            }
            // Whatever outlived `up` (a stop cut short) must not outlive the test.
            foreach (var pid in components)
            {
                KillIfStillOurs(pid);
            }
        }
        _up?.Dispose();
        if (_receiver is not null)
        {
            await _receiver.DisposeAsync();
        }
        try
        {
            Directory.Delete(_directory, recursive: true);
        }
        catch (IOException)
        {
            // a component still closing its log; the temporary directory is left
        }
    }

    /// <summary>The processes `up` started: every process whose command line names this test's deployment directory.</summary>
    private List<int> ComponentPids()
    {
        var pids = new List<int>();
        foreach (var dir in Directory.EnumerateDirectories("/proc"))
        {
            if (int.TryParse(Path.GetFileName(dir), out var pid) && pid != _up!.Id && CommandLine(pid).Contains(_directory, StringComparison.Ordinal))
            {
                pids.Add(pid);
            }
        }
        return pids;
    }

    private void KillIfStillOurs(int pid)
    {
        if (!CommandLine(pid).Contains(_directory, StringComparison.Ordinal))
        {
            return;
        }
        try
        {
            using var p = Process.GetProcessById(pid);
            p.Kill(entireProcessTree: true);
        }
        catch (Exception e) when (e is ArgumentException or InvalidOperationException or System.ComponentModel.Win32Exception)
        {
            // already gone
        }
    }

    private static string CommandLine(int pid)
    {
        try
        {
            return File.ReadAllText($"/proc/{pid}/cmdline").Replace('\0', ' ');
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return "";
        }
    }

    [GeneratedRegex(@"^\s+metrics\s+(\S+)\s+(http://\S+)$", RegexOptions.Multiline)]
    private static partial Regex ScrapeLine();

    [GeneratedRegex(@"^\s+(pre-sq-\d+)\s+(https?://\S+)$", RegexOptions.Multiline)]
    private static partial Regex PreSqLine();

    [GeneratedRegex(@"delivered\s+\S+ msg/s\s+total\s+(\d+)")]
    private static partial Regex DeliveredLine();
}
