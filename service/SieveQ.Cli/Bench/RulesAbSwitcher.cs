using System.Diagnostics;
using System.Security.Cryptography;
using SieveQ.Sieve.Hosting.Keys;
using SieveQ.Sieve.Keys;
using SieveQ.Deployment;
using SieveQ.Rules;
using SieveQ.Rules.Signing;

namespace SieveQ.Cli.Bench;

/// <summary>
/// The rule-set side of `bench e2e --rules`: in one running deployment, switches between the operator's
/// rule set (treatment) and the same rules without patterns (baseline) through the ordering, as
/// `sieveq rules push` would, and marks the measured phases. Both arms then share one deployment, one
/// warm-up and whatever mode its ordering settled in, which two separate deployments never did.
/// <para>
/// Phases follow an ABBA order (treatment, baseline, baseline, treatment, ...), so a steady drift over
/// the run weighs on both arms alike. After each switch is agreed, <see cref="Settle"/> passes before
/// the next phase opens: messages sent meanwhile met queues built under the other rule set.
/// </para>
/// <para>
/// During the warm-up, <see cref="PrimeAsync"/> switches once each way. The first switch to a rule set
/// compiles and loads code no later switch does; without the primer, that cost fell on the first
/// measured phase, always a treatment phase, and skewed the comparison (docs/design-figures.md).
/// </para>
/// </summary>
internal sealed class RulesAbSwitcher
{
    public static readonly TimeSpan Settle = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan PushTimeout = TimeSpan.FromSeconds(30);

    private readonly byte[] _treatment;
    private readonly byte[] _baseline;
    private readonly TimeSpan _phaseLength;
    private int _version = 1;
    private PhaseArm _running = PhaseArm.Baseline;

    /// <param name="treatment">The operator's rule set (any version; each push re-versions it).</param>
    /// <param name="baseline">The deployment's initial rule set, running as version 1.</param>
    public RulesAbSwitcher(byte[] treatment, byte[] baseline, TimeSpan phaseLength)
    {
        _treatment = treatment;
        _baseline = baseline;
        _phaseLength = phaseLength;
    }

    /// <summary>The arm of phase <paramref name="index"/>: ABBA ABBA ...</summary>
    public static PhaseArm ArmOf(int index) => (index + 1) / 2 % 2 == 0 ? PhaseArm.Treatment : PhaseArm.Baseline;

    /// <summary>How many phases fit the measured length (at least two, one per arm).</summary>
    public static int PhaseCount(TimeSpan length, TimeSpan phaseLength) =>
        Math.Clamp((int)Math.Round(length / phaseLength), 2, MeasuredPhases.MaxPhases);

    /// <summary>Switches to the treatment and back to the baseline, outside the measured time.</summary>
    public async Task PrimeAsync(DeploymentConfig config, string deploymentDir, CancellationToken ct)
    {
        using var admin = OpenAdministrator(deploymentDir);
        foreach (var arm in new[] { PhaseArm.Treatment, PhaseArm.Baseline })
        {
            await SwitchAsync(config, deploymentDir, admin, arm, ct).ConfigureAwait(false);
            await Task.Delay(Settle, ct).ConfigureAwait(false);
        }
    }

    private static ECDsa OpenAdministrator(string deploymentDir) =>
        new PemFileKeyStore(Path.Combine(deploymentDir, "keys")).OpenSigningKey(DeploymentRules.AdministratorKeyName);

    /// <summary>Runs the phases over <paramref name="length"/> from now, switching rule sets between them.</summary>
    public async Task RunAsync(DeploymentConfig config, string deploymentDir, MeasuredPhases phases, TimeSpan length, CancellationToken ct)
    {
        using var admin = OpenAdministrator(deploymentDir);
        var start = Stopwatch.GetTimestamp();
        var count = PhaseCount(length, _phaseLength);
        for (var i = 0; i < count; i++)
        {
            var end = start + (long)((i + 1) * length.TotalSeconds / count * Stopwatch.Frequency);
            var arm = ArmOf(i);
            if (arm != _running)
            {
                await SwitchAsync(config, deploymentDir, admin, arm, ct).ConfigureAwait(false);
                await Task.Delay(Settle, ct).ConfigureAwait(false);
            }
            var from = Stopwatch.GetTimestamp();
            if (from >= end)
            {
                continue; // the switch took the whole phase
            }
            phases.Open(arm, $"v{_version}", from);
            await Task.Delay(Stopwatch.GetElapsedTime(from, end), ct).ConfigureAwait(false);
            phases.Close(Stopwatch.GetTimestamp());
        }
    }

    private async Task SwitchAsync(DeploymentConfig config, string deploymentDir, ECDsa admin, PhaseArm arm, CancellationToken ct)
    {
        var version = _version + 1;
        var json = RuleSetVariants.WithVersion(arm == PhaseArm.Treatment ? _treatment : _baseline, version);
        var file = Path.Combine(deploymentDir, "bench-rules", $"v{version}.json");
        Directory.CreateDirectory(Path.GetDirectoryName(file)!);
        await File.WriteAllBytesAsync(file, json, ct).ConfigureAwait(false);
        var canonical = RuleSetLoader.CompileUnsigned(json).Document.CanonicalBytes;
        await File.WriteAllBytesAsync(file + SignatureSidecar.Extension, RuleSetSigner.Sign(canonical, admin).ToJson(), ct).ConfigureAwait(false);
        var state = await RuleSetPublisher.ReadStateAsync(config, ct).ConfigureAwait(false);
        var (command, _) = RuleSetPublisher.BuildPush(file, admin, config, state);
        var (result, _) = await RuleSetPublisher.SubmitAsync(config, command, PushTimeout, ct).ConfigureAwait(false);
        if (!result.Applied || result.ActiveVersion != version)
        {
            throw new RuleSetPublishException($"switching the rule set to version {version} failed: {result.Reason}");
        }
        _version = version;
        _running = arm;
    }
}
