using System.Globalization;
using System.Text.Json;
using SieveQ.Sdk;
using SieveQ.Sieve.Hosting.Keys;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;
using SieveQ.Transport.Tls;

namespace SieveQ.Sdk.Sample;

/// <summary>The sample's own settings file: where the deployment is, who this application is, how much to send.</summary>
internal sealed record SampleSettings
{
    public required DeploymentSettings Deployment { get; init; }
    public required IdentitySettings Identity { get; init; }
    public RunSettings Run { get; init; } = new();

    /// <summary>Relative paths in the file are taken from the file's own folder, as an installed application's would be.</summary>
    public string BaseDirectory { get; private init; } = ".";

    public static SampleSettings Load(string path)
    {
        var full = Path.GetFullPath(path);
        SampleSettings? settings;
        try
        {
            settings = JsonSerializer.Deserialize<SampleSettings>(File.ReadAllText(full), JsonOptions);
        }
        catch (JsonException e)
        {
            throw new InvalidDataException($"{full}: {e.Message}", e);
        }
        if (settings is null)
        {
            throw new InvalidDataException($"{full}: empty settings");
        }
        settings.Validate(full);
        return settings with { BaseDirectory = Path.GetDirectoryName(full)! };
    }

    public string Resolve(string path) => Path.GetFullPath(path, BaseDirectory);

    /// <summary>What the SDK needs of the deployment, with this application's own keys.</summary>
    public SieveQClientConfiguration ToClientConfiguration() => new()
    {
        F = Deployment.F,
        MacEpoch = Deployment.MacEpoch,
        PreSqs = Deployment.PreSqs.ToDictionary(p => Id(p.Key), p => p.Value.Url),
        Replicas = Deployment.Replicas.ToDictionary(p => Id(p.Key), p => p.Value.Url),
        PreSqTlsPins = Pins(Deployment.PreSqs),
        ReplicaTlsPins = Pins(Deployment.Replicas),
        Enrolment = Enrolment.FromJson(File.ReadAllText(Resolve(Deployment.EnrolmentFile))),
        Keys = new PemFileKeyStore(Resolve(Identity.KeyDirectory)),
        Routes = Deployment.Routes?.Select(r => new Route(r.Sender, r.Receiver, r.MaxBytes)).ToList(),
    };

    private static int Id(string key) => int.Parse(key, CultureInfo.InvariantCulture);

    private static Dictionary<int, TlsPin> Pins(Dictionary<string, EndpointSettings> endpoints) =>
        endpoints.Where(e => e.Value.TlsPin is not null).ToDictionary(e => Id(e.Key), e => TlsPin.Parse(e.Value.TlsPin!));

    private void Validate(string file)
    {
        var problems = new List<string>();
        if (Deployment.F < 0)
        {
            problems.Add("deployment.f must be >= 0");
        }
        if (Deployment.PreSqs.Count == 0 || Deployment.Replicas.Count == 0)
        {
            problems.Add("deployment.preSqs and deployment.replicas need at least one endpoint each");
        }
        problems.AddRange(Deployment.PreSqs.Keys.Concat(Deployment.Replicas.Keys)
            .Where(k => !int.TryParse(k, NumberStyles.None, CultureInfo.InvariantCulture, out _))
            .Select(k => $"endpoint id '{k}' is not a number"));
        foreach (var (kind, endpoints) in new[] { ("preSqs", Deployment.PreSqs), ("replicas", Deployment.Replicas) })
        {
            foreach (var (id, endpoint) in endpoints)
            {
                if (endpoint?.Url is null)
                {
                    problems.Add($"deployment.{kind}.{id} needs a url");
                }
                else if (endpoint.TlsPin is { } pin && !IsPin(pin))
                {
                    problems.Add($"deployment.{kind}.{id}.tlsPin is not a base64 SHA-256 key pin");
                }
            }
        }
        if (Run.Messages is < 2 or > 100_000)
        {
            problems.Add("run.messages must be 2..100000");
        }
        if (Run.IntervalMilliseconds is < 0 or > 60_000)
        {
            problems.Add("run.intervalMilliseconds must be 0..60000");
        }
        if (problems.Count > 0)
        {
            throw new InvalidDataException($"{file}: {string.Join("; ", problems)}");
        }
    }

    private static bool IsPin(string text)
    {
        try
        {
            TlsPin.Parse(text);
            return true;
        }
        catch (FormatException)
        {
            return false;
        }
    }

    private static readonly JsonSerializerOptions JsonOptions = new()
    {
        PropertyNameCaseInsensitive = true,
        ReadCommentHandling = JsonCommentHandling.Skip,
        UnmappedMemberHandling = System.Text.Json.Serialization.JsonUnmappedMemberHandling.Disallow,
    };
}

internal sealed record DeploymentSettings
{
    public int F { get; init; } = 1;
    public uint MacEpoch { get; init; } = 1;
    public required Dictionary<string, EndpointSettings> PreSqs { get; init; }
    public required Dictionary<string, EndpointSettings> Replicas { get; init; }
    public required string EnrolmentFile { get; init; }

    /// <summary>The routes the deployment enforces, so that the SDK refuses at the call what the replicas would drop.</summary>
    public List<RouteSettings>? Routes { get; init; }
}

/// <summary>One endpoint; an https:// one names the TLS key pin the deployment gives for it (deployment.json tlsPin).</summary>
internal sealed record EndpointSettings(Uri Url, string? TlsPin);

internal sealed record RouteSettings(int Sender, int Receiver, int MaxBytes);

internal sealed record IdentitySettings
{
    public required int SenderId { get; init; }
    public required int ReceiverId { get; init; }

    /// <summary>This application's private keys (sender-N-sign/-agree, receiver-N-sign/-agree), owner-only files.</summary>
    public required string KeyDirectory { get; init; }

    /// <summary>The sender's sequence and outbox files and the receiver's cursors.</summary>
    public required string StateDirectory { get; init; }
}

internal sealed record RunSettings
{
    public int Messages { get; init; } = 200;

    /// <summary>Pause between sends of the second half, so that a deployment restart falls in the middle of it.</summary>
    public int IntervalMilliseconds { get; init; } = 50;

    public int TimeoutSeconds { get; init; } = 180;
}
