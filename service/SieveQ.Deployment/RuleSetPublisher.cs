using System.Security.Cryptography;
using Google.Protobuf;
using SieveQ.Sieve.Envelope;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Rules;
using SieveQ.Rules.Signing;
using SieveQ.Transport;

namespace SieveQ.Deployment;

/// <summary>The replicas' rule-set state as f+1 of them report it in their health replies.</summary>
public sealed record RulesState(int ActiveVersion, int PreviousVersion, long LastNonce);

/// <summary>Why a push or rollback did not happen, in words an administrator can act on.</summary>
public sealed class RuleSetPublishException : Exception
{
    public RuleSetPublishException() { }

    public RuleSetPublishException(string message) : base(message) { }

    public RuleSetPublishException(string message, Exception inner) : base(message, inner) { }
}

/// <summary>
/// The administrator's side of `sieveq rules push` and `rollback`: read the running version from the
/// replicas (f+1 must agree), build and sign the command against it, and hand it to a pre-SQ, trying
/// the next one when a pre-SQ cannot be reached. The replicas decide; this only reports what f+1 of
/// them agreed on.
/// </summary>
public static class RuleSetPublisher
{
    private static readonly TimeSpan ProbeTimeout = TimeSpan.FromSeconds(3);
    private const int StateReadAttempts = 5;
    private static readonly TimeSpan StateReadPause = TimeSpan.FromSeconds(1);

    public static async Task<RulesState> ReadStateAsync(DeploymentConfig config, CancellationToken ct = default)
    {
        ArgumentNullException.ThrowIfNull(config);
        if (config.Rules is null)
        {
            throw new RuleSetPublishException("this deployment runs fixed routes (no rules section in deployment.json); create it with a rule set to push rule sets");
        }
        // Right after a change the replicas that executed it and those still catching up answer different
        // versions, and a loaded replica can miss one probe: ask again, a bounded number of times, before
        // concluding that f+1 do not agree.
        for (int attempt = 1; ; attempt++)
        {
            var replies = await Task.WhenAll(config.Replicas.Select(r =>
                DeploymentHealth.ProbeAsync("replica-sq", r.Name, r.ApiUrl, ProtocolNames.ReplicaSqService, ProbeTimeout, ct, r.Pin()))).ConfigureAwait(false);
            var states = replies.Where(h => h.Reachable && h.Counters.ContainsKey("rules.active_version"))
                .Select(h => new RulesState((int)h.Counters["rules.active_version"], (int)h.Counters.GetValueOrDefault("rules.previous_version"),
                    h.Counters.GetValueOrDefault("rules.last_nonce")))
                .GroupBy(s => s)
                .OrderByDescending(g => g.Count())
                .FirstOrDefault();
            if (states is not null && states.Count() >= config.F + 1)
            {
                return states.Key;
            }
            if (attempt == StateReadAttempts)
            {
                throw new RuleSetPublishException($"fewer than f+1 = {config.F + 1} replica-SQs agree on the running rule-set version ({replies.Count(h => h.Reachable)} reachable, {StateReadAttempts} reads); is the deployment up?");
            }
            await Task.Delay(StateReadPause, ct).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Checks FILE (and FILE.sig) as a replica would, with the administrator key as the pinned key, and
    /// builds the signed activation command from the running version.
    /// </summary>
    public static (byte[] Command, CompiledRuleSet RuleSet) BuildPush(string file, ECDsa administrator, DeploymentConfig config, RulesState state)
    {
        ArgumentNullException.ThrowIfNull(administrator);
        ArgumentNullException.ThrowIfNull(state);
        var admin = CheckAdministrator(administrator, config);
        try
        {
            RuleSetLoader.LoadFile(file, admin);
        }
        catch (RuleSetException e)
        {
            throw new RuleSetPublishException($"{Path.GetFileName(file)} refused before sending: {e.Message}", e);
        }
        return BuildPush(Path.GetFileName(file), File.ReadAllBytes(file), File.ReadAllBytes(file + SignatureSidecar.Extension), administrator, config, state);
    }

    /// <summary>
    /// Checks a rule set and its signature sidecar as a replica would, with the administrator key as the pinned key,
    /// and builds the signed activation command from the running version. <paramref name="label"/> names the document in errors.
    /// </summary>
    public static (byte[] Command, CompiledRuleSet RuleSet) BuildPush(string label, byte[] json, byte[] sidecar, ECDsa administrator, DeploymentConfig config, RulesState state)
    {
        ArgumentNullException.ThrowIfNull(json);
        ArgumentNullException.ThrowIfNull(sidecar);
        ArgumentNullException.ThrowIfNull(administrator);
        ArgumentNullException.ThrowIfNull(state);
        var admin = CheckAdministrator(administrator, config);
        if (json.Length > EnvelopeLimits.MaxRuleSetDocumentBytes)
        {
            throw new RuleSetPublishException($"{label} is {json.Length} bytes; a rule set pushed through the ordering may have at most {EnvelopeLimits.MaxRuleSetDocumentBytes}");
        }
        LoadedRuleSet loaded;
        try
        {
            loaded = RuleSetLoader.Load(json, sidecar, admin);
        }
        catch (RuleSetException e)
        {
            throw new RuleSetPublishException($"{label} refused before sending: {e.Message}", e);
        }
        if (loaded.Compiled.Version <= state.ActiveVersion)
        {
            throw new RuleSetPublishException($"{label} is version {loaded.Compiled.Version}; version {state.ActiveVersion} is running, so a push needs a higher version (or use `sieveq rules rollback`)");
        }
        var region = RuleSetCommandCodec.EncodeRegion(RuleSetOp.Activate, state.ActiveVersion, loaded.Compiled.Version, NextNonce(state), json, sidecar);
        return (RuleSetCommandCodec.Sign(region, administrator), loaded.Compiled);
    }

    public static byte[] BuildRollback(ECDsa administrator, DeploymentConfig config, RulesState state)
    {
        ArgumentNullException.ThrowIfNull(administrator);
        ArgumentNullException.ThrowIfNull(state);
        CheckAdministrator(administrator, config);
        if (state.PreviousVersion < 1)
        {
            throw new RuleSetPublishException($"nothing to roll back to: version {state.ActiveVersion} runs and no earlier version is kept");
        }
        var region = RuleSetCommandCodec.EncodeRegion(RuleSetOp.Rollback, state.ActiveVersion, state.PreviousVersion, NextNonce(state), [], []);
        return RuleSetCommandCodec.Sign(region, administrator);
    }

    /// <summary>Sends the command to the pre-SQs in turn until one answers; returns the agreed result and who carried it.</summary>
    public static async Task<(RuleSetResult Result, string PreSq)> SubmitAsync(DeploymentConfig config, byte[] command, TimeSpan timeout, CancellationToken ct = default)
    {
        ArgumentNullException.ThrowIfNull(config);
        var failures = new List<string>();
        foreach (var p in config.PreSqs)
        {
            using var cts = CancellationTokenSource.CreateLinkedTokenSource(ct);
            cts.CancelAfter(timeout);
            try
            {
                using var channel = GrpcChannel.ForAddress(new Uri(p.Url), p.Pin(), EnvelopeLimits.MaxReasonBytes * 16);
                var reply = await channel.UnaryAsync(ProtocolNames.PreSqService, ProtocolNames.SubmitRuleSetCommand,
                    new RuleSetCommandSubmission { Canonical = ByteString.CopyFrom(command) }, RuleSetCommandOutcome.Parser, cts.Token).ConfigureAwait(false);
                return (RuleSetResultCodec.Decode(reply.Canonical.Span), p.Name);
            }
            catch (GrpcCallException e) when (e.Status is GrpcStatusCode.InvalidArgument or GrpcStatusCode.Unauthenticated)
            {
                // The pre-SQ refused the command itself; another one would too.
                throw new RuleSetPublishException($"{p.Name} refused the command: {e.Message}", e);
            }
            catch (MalformedEnvelopeException e)
            {
                failures.Add($"{p.Name}: unreadable result ({e.Message})");
            }
            catch (Exception e) when (e is GrpcCallException or HttpRequestException or IOException or OperationCanceledException or System.Net.Sockets.SocketException)
            {
                if (ct.IsCancellationRequested)
                {
                    throw;
                }
                failures.Add($"{p.Name}: {e.Message}");
            }
        }
        throw new RuleSetPublishException("no pre-SQ took the command: " + string.Join("; ", failures));
    }

    private static SignerKey CheckAdministrator(ECDsa administrator, DeploymentConfig config)
    {
        SignerKey key;
        try
        {
            key = SignerKey.Of(administrator);
        }
        catch (CryptographicException e)
        {
            throw new RuleSetPublishException($"the administrator key must be ECDSA P-256 ({e.Message})", e);
        }
        if (config.Rules is { } rules && !key.Matches(rules.AdministratorKey))
        {
            throw new RuleSetPublishException($"this key ({key.KeyId}) is not the deployment's administrator key ({DeploymentRules.Administrator(rules).KeyId}); the replicas would refuse the command");
        }
        return key;
    }

    /// <summary>Wall-clock milliseconds, but always above the last nonce applied (a clock behind the last administrator's still works).</summary>
    private static long NextNonce(RulesState state) => Math.Max(DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(), state.LastNonce + 1);
}
