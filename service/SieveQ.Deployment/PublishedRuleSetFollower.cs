using System.Diagnostics.Metrics;
using System.Security.Cryptography;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using SieveQ.Sieve.Envelope;
using SieveQ.Rules;
using SieveQ.Rules.Signing;
using SieveQ.Transport.Reconnect;

namespace SieveQ.Deployment;

/// <summary>What the last check of the published rule set came to.</summary>
public enum PublishedRuleSetStatus
{
    /// <summary>The policy names no rule-set location.</summary>
    NotConfigured,

    /// <summary>The location could not be read or no pre-SQ could be reached; tried again with back-off.</summary>
    Unreachable,

    /// <summary>The document failed here (pinned signer, schema, compilation) or at the pre-SQ: never sent to the replicas.</summary>
    Refused,

    /// <summary>The replicas switched to it at one point of the agreed order.</summary>
    Applied,

    /// <summary>The replicas already run this version (another host published it first).</summary>
    AlreadyActive,

    /// <summary>The replicas refused it, e.g. its version is not above one already run (after an administrator's rollback).</summary>
    RefusedByReplicas,

    /// <summary>Same document as the last settled check: nothing was sent.</summary>
    Unchanged,
}

public sealed record PublishedRuleSetOutcome(PublishedRuleSetStatus Status, int? Version, string? DigestHex, string Detail, DateTimeOffset At);

/// <summary>
/// The agent's side of Group Policy's rule-set location: fetch the document and its signature file from where
/// the policy points, check them against the signer the policy pins (the same checks a replica makes), and
/// hand a new version to a pre-SQ as a <see cref="RuleSetOp.Publish"/> command, which the replicas take only
/// above every version they ever ran. A document is settled once the replicas answered for it (applied,
/// already running or refused) and is not sent again until its content changes, so a fleet of agents costs
/// the ordering one command per host per published version, and an administrator's rollback is not undone
/// by the hosts still pointing at the newer file. One check at a time; the location is read with the
/// ordering's size limits.
/// </summary>
public sealed class PublishedRuleSetFollower : IAsyncDisposable
{
    private static readonly Meter Meter = new("SieveQ.Deployment.RuleSets");
    private static readonly Counter<long> Checks = Meter.CreateCounter<long>("sieveq.ruleset.published.checks", "{check}", "Checks of the policy's rule-set location, by outcome");

    private readonly DeploymentConfig _config;
    private readonly ILogger _log;
    private readonly PublishedRuleSetSource _source;
    private readonly TimeSpan _pollInterval;
    private readonly TimeSpan _submitTimeout;
    private readonly SemaphoreSlim _one = new(1, 1);
    private readonly SemaphoreSlim _wake = new(0, 1);
    private readonly ReconnectBackoff _unreachableBackoff;
    private readonly CancellationTokenSource _stop = new();
    private RuleSetTarget? _target;
    private string? _settledDigest;
    private PublishedRuleSetOutcome? _last;
    private Task _loop = Task.CompletedTask;

    /// <param name="pollInterval">How often the location is read again while nothing changes (the file may be replaced without a policy change).</param>
    public PublishedRuleSetFollower(DeploymentConfig config, ILogger? log = null, PublishedRuleSetSource? source = null,
        TimeSpan? pollInterval = null, TimeSpan? submitTimeout = null)
    {
        ArgumentNullException.ThrowIfNull(config);
        _config = config;
        _log = log ?? NullLogger.Instance;
        _source = source ?? new PublishedRuleSetSource();
        _pollInterval = pollInterval ?? TimeSpan.FromMinutes(5);
        // An unreachable location is read again after 1 s, 2 s, 4 s ... but never later than the next poll.
        var firstRetry = TimeSpan.FromSeconds(1);
        _unreachableBackoff = new ReconnectBackoff(firstRetry < _pollInterval ? firstRetry : _pollInterval, _pollInterval, BackoffJitter.None);
        _submitTimeout = submitTimeout ?? TimeSpan.FromSeconds(30);
    }

    public PublishedRuleSetOutcome? Last => Volatile.Read(ref _last);

    /// <summary>Points the follower at a new location and signer (null: the policy names none) and checks at once.</summary>
    public void Follow(string? location, string? signerSpkiBase64)
    {
        Volatile.Write(ref _target, location is null || signerSpkiBase64 is null ? null : new RuleSetTarget(location, signerSpkiBase64));
        Wake();
    }

    /// <summary>Checks on every <see cref="Follow"/> and every poll interval; after an unreachable location, sooner, with back-off.</summary>
    public void Start() => _loop = Task.Run(() => RunAsync(_stop.Token));

    public async Task<PublishedRuleSetOutcome> CheckAsync(CancellationToken ct = default)
    {
        await _one.WaitAsync(ct).ConfigureAwait(false);
        try
        {
            var outcome = Volatile.Read(ref _target) is { } target
                ? await CheckTargetAsync(target.Location, target.Signer, ct).ConfigureAwait(false)
                : Outcome(PublishedRuleSetStatus.NotConfigured, null, null, "the policy names no rule-set location");
            Volatile.Write(ref _last, outcome);
            Checks.Add(1, new KeyValuePair<string, object?>("outcome", outcome.Status.ToString()));
            Log(outcome);
            return outcome;
        }
        finally
        {
            _one.Release();
        }
    }

    private sealed record RuleSetTarget(string Location, string Signer);

    private async Task<PublishedRuleSetOutcome> CheckTargetAsync(string location, string signer, CancellationToken ct)
    {
        FetchedRuleSet fetched;
        try
        {
            fetched = await _source.FetchAsync(location, ct).ConfigureAwait(false);
        }
        catch (RuleSetFetchException e)
        {
            return Outcome(PublishedRuleSetStatus.Unreachable, null, null, e.Message);
        }
        LoadedRuleSet loaded;
        try
        {
            loaded = RuleSetLoader.Load(fetched.Document, fetched.Signature, SignerKey.FromSpki(Convert.FromBase64String(signer.Trim())));
        }
        catch (Exception e) when (e is RuleSetException or CryptographicException or FormatException)
        {
            return Outcome(PublishedRuleSetStatus.Refused, null, null, $"{location} refused: {e.Message}");
        }
        var version = loaded.Compiled.Version;
        var digest = loaded.Compiled.DigestHex;
        if (digest == _settledDigest)
        {
            return Outcome(PublishedRuleSetStatus.Unchanged, version, digest, $"version {version} already settled");
        }
        var command = RuleSetCommandCodec.EncodePublish(version, fetched.Document, fetched.Signature);
        RuleSetResult result;
        string via;
        try
        {
            (result, via) = await RuleSetPublisher.SubmitAsync(_config, command, _submitTimeout, ct).ConfigureAwait(false);
        }
        catch (RuleSetPublishException e) when (e.InnerException is SieveQ.Transport.GrpcCallException)
        {
            // A pre-SQ refused the command itself (signature, schema): every other one would too.
            _settledDigest = digest;
            return Outcome(PublishedRuleSetStatus.Refused, version, digest, e.Message);
        }
        catch (RuleSetPublishException e)
        {
            return Outcome(PublishedRuleSetStatus.Unreachable, version, digest, e.Message);
        }
        _settledDigest = digest;
        if (result.Applied)
        {
            return Outcome(PublishedRuleSetStatus.Applied, version, digest, $"via {via}: {result.Reason}");
        }
        return result.ActiveVersion == version
            ? Outcome(PublishedRuleSetStatus.AlreadyActive, version, digest, $"version {version} already runs")
            : Outcome(PublishedRuleSetStatus.RefusedByReplicas, version, digest, $"via {via}: {result.Reason}; version {result.ActiveVersion} keeps running");
    }

    private async Task RunAsync(CancellationToken ct)
    {
        try
        {
            while (!ct.IsCancellationRequested)
            {
                var outcome = await CheckAsync(ct).ConfigureAwait(false);
                var wait = _pollInterval;
                if (outcome.Status == PublishedRuleSetStatus.Unreachable)
                {
                    wait = _unreachableBackoff.NextDelay();
                }
                else
                {
                    _unreachableBackoff.Reset();
                }
                await _wake.WaitAsync(wait, ct).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException) when (ct.IsCancellationRequested)
        {
            // stopping
        }
    }

    private void Wake()
    {
        try
        {
            _wake.Release();
        }
        catch (SemaphoreFullException)
        {
            // A check is already due.
        }
    }

    private void Log(PublishedRuleSetOutcome o)
    {
        var level = o.Status switch
        {
            PublishedRuleSetStatus.Refused or PublishedRuleSetStatus.RefusedByReplicas => LogLevel.Error,
            PublishedRuleSetStatus.Unreachable => LogLevel.Warning,
            PublishedRuleSetStatus.Unchanged or PublishedRuleSetStatus.NotConfigured => LogLevel.Debug,
            _ => LogLevel.Information,
        };
        _log.Log(level, "published rule set: {Status} (version {Version}, sha256 {Digest}): {Detail}", o.Status, o.Version, o.DigestHex, o.Detail);
    }

    private static PublishedRuleSetOutcome Outcome(PublishedRuleSetStatus status, int? version, string? digest, string detail) =>
        new(status, version, digest, detail, DateTimeOffset.UtcNow);

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        await _loop.ConfigureAwait(false);
        _stop.Dispose();
        _one.Dispose();
        _wake.Dispose();
    }
}
