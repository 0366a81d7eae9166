using System.Security.Cryptography;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Replica;
using SieveQ.Rules.Signing;

namespace SieveQ.Rules.Activation;

/// <summary>
/// The replica's application rules when rule sets are replaced through the ordering: the
/// <see cref="RuleSetStore"/> (running and previous version) driven by rule-set commands
/// (<see cref="RuleSetCommandCodec"/>) signed by the pinned administrator key.
/// <para>
/// Preparation (<see cref="Prepare"/>, on the verifier's threads) checks the command's signature, the
/// document's own signature, schema and references and compiles it; the outcome is a pure function of
/// the command bytes, the pinned key and the compile options, kept in a small cache keyed by the
/// command's SHA-256. A publish (<see cref="RuleSetOp.Publish"/>) has no command signature: the document's
/// own signature by the same key authorises it. <see cref="Apply"/> (the ordering thread) takes the prepared outcome, or
/// computes it inline when preparation was skipped, and adds the agreed-state checks: the command's
/// <c>fromVersion</c> is the running version, its nonce is above the last applied one, an activation
/// raises the highest version ever run, a rollback names the version kept for it. So every replica
/// decides the same whatever its cache holds.
/// </para>
/// Not thread-safe except <see cref="Prepare"/>: the sieve calls everything else from its one execution thread.
/// </summary>
public sealed class OrderedRuleSets : IApplicationRules, IRuleSetControl, IPayloadPrescan
{
    /// <summary>Prepared commands kept for execution; a push is rare, so a handful is plenty.</summary>
    public const int PreparedCapacity = 8;

    private static readonly byte[] StateTag = "SIEVEQ/ORDERED-RULESETS/v1"u8.ToArray();

    private readonly RuleSetStore _store;
    private readonly SignerKey _admin;
    private readonly CompileOptions _options;
    private readonly Lock _gate = new();
    private readonly Dictionary<string, Prepared> _prepared = new(StringComparer.Ordinal);
    private readonly Queue<string> _preparedOrder = new();
    private long _lastNonce;
    private (CompiledRuleSet Running, CompiledRuleSet? Previous, RuleSetStanding Standing)? _standing;

    public OrderedRuleSets(CompiledRuleSet initial, SignerKey admin, CompileOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(initial);
        ArgumentNullException.ThrowIfNull(admin);
        _options = options ?? CompileOptions.Default;
        _store = new RuleSetStore(initial, _options);
        _admin = admin;
    }

    public RuleSetStore Store => _store;

    public SignerKey Administrator => _admin;

    public int ActiveVersion => _store.Current.Version;

    /// <summary>Nonce of the last applied command (0 before the first).</summary>
    public long LastNonce => _lastNonce;

    /// <inheritdoc/>
    public RuleSetStanding Standing
    {
        get
        {
            // Asked after every execution and rarely different: the last answer is kept while it holds.
            var running = _store.Current;
            var previous = _store.Previous;
            if (_standing is not { } kept || !ReferenceEquals(kept.Running, running) || !ReferenceEquals(kept.Previous, previous) || kept.Standing.LastNonce != _lastNonce)
            {
                var standing = new RuleSetStanding(running.Version, previous?.Version, _lastNonce, () =>
                {
                    var p = running.Prescans;
                    return new PrescanCounts(p.Prescanned, p.Found, p.ScannedInline);
                });
                kept = (running, previous, standing);
                _standing = kept;
            }
            return kept.Standing;
        }
    }

    /// <summary>Commands found prepared at execution (observability; never part of a decision).</summary>
    public long PreparedHits { get; private set; }

    public RuleVerdict Evaluate(in RuleInput input) => _store.Evaluate(input);

    public PayloadPrescan Prescan(ReadOnlyMemory<byte> payload) => _store.Prescan(payload);

    public void Prepare(ReadOnlyMemory<byte> command)
    {
        var key = Key(command.Span);
        lock (_gate)
        {
            if (_prepared.ContainsKey(key))
            {
                return;
            }
        }
        Remember(key, Check(command));
    }

    public RuleSetResult Apply(ReadOnlyMemory<byte> command, long nextEvaluation)
    {
        var key = Key(command.Span);
        Prepared? prepared;
        lock (_gate)
        {
            _prepared.Remove(key, out prepared);
        }
        if (prepared is null)
        {
            prepared = Check(command);
        }
        else
        {
            PreparedHits++;
        }
        if (prepared.Refusal is { } refusal)
        {
            return Refused(refusal, nextEvaluation);
        }
        var c = prepared.Command!;
        // A publish is authorised by the document's signature alone; the rule that its version is above
        // every version ever run (checked when it is scheduled) is what makes replaying it useless.
        if (c.Op != RuleSetOp.Publish && c.Nonce <= _lastNonce)
        {
            return Refused($"replayed or stale command: nonce {c.Nonce} is not above the last applied nonce {_lastNonce}", nextEvaluation);
        }
        if (c.Op != RuleSetOp.Publish && c.FromVersion != ActiveVersion)
        {
            return Refused($"stale command: it was written against version {c.FromVersion}, but version {ActiveVersion} is running", nextEvaluation);
        }
        // Past the last switch point, so two commands with no message between them both get one.
        var at = Math.Max(nextEvaluation, _store.Sequence + 1);
        ScheduleResult scheduled;
        if (c.Op is RuleSetOp.Activate or RuleSetOp.Publish)
        {
            scheduled = _store.ScheduleActivation(prepared.Compiled!, at);
        }
        else if (_store.Previous is not { } previous)
        {
            return Refused("nothing to roll back to: no earlier version is kept", nextEvaluation);
        }
        else if (previous.Version != c.ToVersion)
        {
            return Refused($"the version kept for rollback is {previous.Version}, not {c.ToVersion}", nextEvaluation);
        }
        else
        {
            scheduled = _store.ScheduleRollback(at);
        }
        if (scheduled != ScheduleResult.Scheduled)
        {
            return Refused(scheduled switch
            {
                ScheduleResult.VersionNotNewer => $"version {c.ToVersion} is not above the highest version run so far ({_store.HighestVersion}); rollback is the only way back",
                ScheduleResult.NothingToRollBackTo => "nothing to roll back to: no earlier version is kept",
                _ => $"the switch could not be scheduled ({scheduled})",
            }, nextEvaluation);
        }
        var was = ActiveVersion;
        _store.AdvanceTo(at);
        if (c.Op != RuleSetOp.Publish)
        {
            _lastNonce = c.Nonce;
        }
        var verb = c.Op switch
        {
            RuleSetOp.Activate => "activated",
            RuleSetOp.Publish => "activated the published",
            _ => "rolled back to",
        };
        return new RuleSetResult(true, ActiveVersion, nextEvaluation,
            $"{verb} version {ActiveVersion} (sha256 {_store.Current.DigestHex}) in place of version {was}, deciding from rule evaluation {nextEvaluation}");
    }

    /// <summary>"SIEVEQ/ORDERED-RULESETS/v1" | u64 last applied nonce | u32 len | the store's state.</summary>
    public byte[] SnapshotState()
    {
        var store = _store.SnapshotState();
        using var w = new CanonicalWriter(StateTag.Length + 12 + store.Length);
        w.Raw(StateTag);
        w.Seq(_lastNonce);
        w.Bytes(store);
        return w.ToArray();
    }

    /// <summary>Throws only <see cref="MalformedEnvelopeException"/>; on failure nothing changes.</summary>
    public void RestoreState(ReadOnlySpan<byte> state)
    {
        var r = new CanonicalReader(state);
        if (!r.Take(StateTag.Length, "ordered rule sets tag").SequenceEqual(StateTag))
        {
            throw new MalformedEnvelopeException("not an ordered rule sets state");
        }
        var nonce = r.Seq("last nonce");
        var store = r.Bytes(int.MaxValue, "rule-set store");
        r.End("ordered rule sets");
        _store.RestoreState(store);
        _lastNonce = nonce;
    }

    /// <summary>Everything that depends on the bytes alone: structure, both signatures, schema, compilation.</summary>
    private Prepared Check(ReadOnlyMemory<byte> bytes)
    {
        RuleSetCommand c;
        try
        {
            c = RuleSetCommandCodec.Decode(bytes);
        }
        catch (MalformedEnvelopeException e)
        {
            return Prepared.Refuse($"malformed command: {e.Message}");
        }
        if (c.Op != RuleSetOp.Publish && !_admin.Verify(RuleSetCommandCodec.SignedBytes(c), c.Signature.Span))
        {
            return Prepared.Refuse($"the command is not signed by the pinned administrator key {_admin.KeyId}");
        }
        if (c.Op == RuleSetOp.Rollback)
        {
            return new Prepared(c, null, null);
        }
        LoadedRuleSet loaded;
        try
        {
            loaded = RuleSetLoader.Load(c.Document, c.DocumentSignature.Span, _admin, _options);
        }
        catch (RuleSetException e)
        {
            return Prepared.Refuse($"rule set refused: {e.Message}");
        }
        catch (CryptographicException)
        {
            return Prepared.Refuse("rule set refused: its signature cannot be checked");
        }
        if (loaded.Compiled.Version != c.ToVersion)
        {
            return Prepared.Refuse($"the document is version {loaded.Compiled.Version} but the command activates version {c.ToVersion}");
        }
        return new Prepared(c, loaded.Compiled, null);
    }

    private void Remember(string key, Prepared prepared)
    {
        lock (_gate)
        {
            if (!_prepared.TryAdd(key, prepared))
            {
                return;
            }
            _preparedOrder.Enqueue(key);
            // The queue may name entries execution already took; bounding it bounds both.
            while (_preparedOrder.Count > PreparedCapacity && _preparedOrder.TryDequeue(out var oldest))
            {
                _prepared.Remove(oldest);
            }
        }
    }

    private RuleSetResult Refused(string reason, long nextEvaluation) => new(false, ActiveVersion, nextEvaluation, "refused: " + reason);

    private static string Key(ReadOnlySpan<byte> command) => Convert.ToHexString(SHA256.HashData(command));

    private sealed record Prepared(RuleSetCommand? Command, CompiledRuleSet? Compiled, string? Refusal)
    {
        public static Prepared Refuse(string reason) => new(null, null, reason);
    }
}
