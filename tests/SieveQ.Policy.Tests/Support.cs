using SieveQ.Policy.Hosting;
using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using System.Security.Cryptography;
using System.Text.Json.Nodes;
using Microsoft.Extensions.Logging;

namespace SieveQ.Policy.Tests;

/// <summary>Builds JSON mirror documents for tests, starting from a complete valid policy.</summary>
internal static class PolicyJson
{
    public static readonly string Signer = Convert.ToBase64String(ECDsa.Create(ECCurve.NamedCurves.nistP256).ExportSubjectPublicKeyInfo());
    public const string AppHash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

    public static JsonObject Valid(string driverMode = "audit") => new()
    {
        [PolicyLayout.RootKeyPath] = new JsonObject
        {
            ["DriverMode"] = driverMode,
            ["ControllerUrl"] = "https://controller.example.org",
            ["EnrolmentId"] = "host-17",
            ["KeyStorageProvider"] = "software",
            ["RuleSetLocation"] = "https://rules.example.org/sieveq/rules.json",
            ["RuleSetSigner"] = Signer,
            ["DefaultMessagesPerSecond"] = 5000,
            ["DefaultMessageBurst"] = 8000,
            ["DefaultConnectionsPerSecond"] = 50,
            ["PreSqEndpoints"] = new JsonObject
            {
                ["1"] = "http://presq-1.example.org:7401",
                ["2"] = "http://presq-2.example.org:7401",
            },
            ["ApplicationWhitelist"] = new JsonObject
            {
                [@"C:\Program Files\Example\app.exe"] = AppHash,
            },
        },
    };

    public static JsonObject Key(JsonObject document) => document[PolicyLayout.RootKeyPath]!.AsObject();

    public static PolicyEvaluation Evaluate(JsonObject document) => Evaluate(document.ToJsonString());

    public static PolicyEvaluation Evaluate(string json)
    {
        var root = JsonPolicyMirror.Parse(System.Text.Encoding.UTF8.GetBytes(json), out string? error);
        return PolicyLoader.Evaluate(root is null
            ? PolicySnapshot.Failed("test", error!, "x")
            : PolicySnapshot.Read("test", root, root.ComputeFingerprint()));
    }
}

/// <summary>A temporary folder with one policy file in it.</summary>
internal sealed class PolicyFolder : IDisposable
{
    public PolicyFolder()
    {
        Directory = Path.Combine(Path.GetTempPath(), "sieveq-policy-" + Guid.NewGuid().ToString("N"));
        System.IO.Directory.CreateDirectory(Directory);
        FilePath = Path.Combine(Directory, "policy.json");
    }

    public string Directory { get; }

    public string FilePath { get; }

    /// <summary>Write-then-rename, as a deployment tool should, so the watcher never sees a half file.</summary>
    public void Write(string content)
    {
        string temporary = FilePath + ".tmp";
        File.WriteAllText(temporary, content);
        File.Move(temporary, FilePath, overwrite: true);
    }

    public void Write(JsonObject document) => Write(document.ToJsonString());

    public void Dispose()
    {
        try
        {
            System.IO.Directory.Delete(Directory, recursive: true);
        }
        catch (IOException)
        {
        }
    }
}

internal sealed class ListLogger<T> : ILogger<T>
{
    private readonly ConcurrentQueue<(LogLevel Level, string Message)> entries = new();

    public IReadOnlyList<(LogLevel Level, string Message)> Entries => [.. entries];

    public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

    public bool IsEnabled(LogLevel logLevel) => true;

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter) =>
        entries.Enqueue((logLevel, formatter(state, exception)));
}

/// <summary>Counts one instrument's measurements for one source; other tests' sources run in parallel.</summary>
internal sealed class CounterProbe : IDisposable
{
    private readonly MeterListener listener = new();
    private long total;

    public CounterProbe(string instrument, string source)
    {
        listener.InstrumentPublished = (i, l) =>
        {
            if (i.Meter.Name == PolicyMetrics.MeterName && i.Name == instrument)
            {
                l.EnableMeasurementEvents(i);
            }
        };
        listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
        {
            foreach (var tag in tags)
            {
                if (tag.Key == PolicyMetrics.SourceTag && (string?)tag.Value == source)
                {
                    Interlocked.Add(ref total, value);
                }
            }
        });
        listener.Start();
    }

    public long Total => Interlocked.Read(ref total);

    public void Dispose() => listener.Dispose();
}

internal static class Eventually
{
    /// <summary>Polls until the condition holds; the timeout is generous and only bounds a hang.</summary>
    public static async Task HoldsAsync(Func<bool> condition, string what, int timeoutSeconds = 30)
    {
        var deadline = DateTime.UtcNow.AddSeconds(timeoutSeconds);
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                Assert.Fail($"not within {timeoutSeconds} s: {what}");
            }
            await Task.Delay(25);
        }
    }
}
