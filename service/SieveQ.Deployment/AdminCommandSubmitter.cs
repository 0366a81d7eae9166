using System.Security.Cryptography;
using Google.Protobuf;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Rules.Signing;
using SieveQ.Sieve.Envelope;
using SieveQ.Transport;

namespace SieveQ.Deployment;

/// <summary>Where an administrator command ended: the outcome f+1 replicas agreed on, or why it never reached them.</summary>
public sealed record AdminCommandReport(bool Applied, string Status, string? Via);

/// <summary>
/// Signs administrator commands (quarantine or readmit a sender or pre-SQ, enrol or revoke a sender) with the deployment's administrator key
/// and hands each to a pre-SQ, trying the next one when a pre-SQ cannot be reached. The replicas decide; this only
/// reports what f+1 of them agreed on. Nonces are wall-clock milliseconds kept rising within the process; when the
/// replicas refuse one as not above their last, the command is signed once more just above it.
/// </summary>
public sealed partial class AdminCommandSubmitter
{
    private readonly DeploymentConfig _config;
    private readonly ECDsa _administrator;
    private readonly TimeSpan _timeout;
    private readonly SemaphoreSlim _one = new(1, 1);
    private long _lastNonce;

    /// <param name="administrator">The administrator's private key; it must be the key the deployment pins (rules.administratorKey).</param>
    public AdminCommandSubmitter(DeploymentConfig config, ECDsa administrator, TimeSpan? timeout = null)
    {
        ArgumentNullException.ThrowIfNull(config);
        ArgumentNullException.ThrowIfNull(administrator);
        if (DeploymentRules.PinnedAdministrator(config) is not { } pinned)
        {
            throw new DeploymentException("this deployment pins no administrator key (neither \"administratorKey\" nor a rules section in deployment.json): the replicas take no administrator commands");
        }
        if (!SignerKey.Of(administrator).Matches(config.PinnedAdministratorKey!))
        {
            throw new DeploymentException($"the command key ({SignerKey.Of(administrator).KeyId}) is not the deployment's administrator key ({pinned.KeyId}); the replicas would refuse its commands");
        }
        _config = config;
        _administrator = administrator;
        _timeout = timeout ?? TimeSpan.FromSeconds(30);
    }

    /// <summary>Orders one command; one at a time, so nonces leave in the order they were made.</summary>
    public Task<AdminCommandReport> ApplyAsync(AdminOp op, int target, CancellationToken ct = default) =>
        ApplyAsync(nonce => AdminCommandCodec.Sign(op, target, nonce, _administrator), ct);

    /// <summary>Orders the enrolment of a sender under <paramref name="sender"/> (0: the next free id the replicas pick).</summary>
    public Task<AdminCommandReport> EnrolSenderAsync(int sender, PartyEnrolmentClaim claim, CancellationToken ct = default) =>
        ApplyAsync(nonce => AdminCommandCodec.SignEnrolment(sender, nonce, claim, _administrator), ct);

    /// <summary>Orders the enrolment of a receiver under <paramref name="receiver"/> (0: the next free id the replicas pick).</summary>
    public Task<AdminCommandReport> EnrolReceiverAsync(int receiver, PartyEnrolmentClaim claim, CancellationToken ct = default) =>
        ApplyAsync(nonce => AdminCommandCodec.SignEnrolment(AdminOp.EnrolReceiver, receiver, nonce, claim, _administrator), ct);

    /// <summary>Orders a route from <paramref name="sender"/> to <paramref name="receiver"/> (new, or its limit changed).</summary>
    public Task<AdminCommandReport> AllowRouteAsync(int sender, int receiver, int maxBytes, CancellationToken ct = default) =>
        ApplyAsync(nonce => AdminCommandCodec.SignRoute(AdminOp.AllowRoute, sender, receiver, maxBytes, nonce, _administrator), ct);

    /// <summary>Orders the removal of the route from <paramref name="sender"/> to <paramref name="receiver"/>.</summary>
    public Task<AdminCommandReport> RemoveRouteAsync(int sender, int receiver, CancellationToken ct = default) =>
        ApplyAsync(nonce => AdminCommandCodec.SignRoute(AdminOp.RemoveRoute, sender, receiver, 0, nonce, _administrator), ct);

    private async Task<AdminCommandReport> ApplyAsync(Func<long, byte[]> sign, CancellationToken ct)
    {
        await _one.WaitAsync(ct).ConfigureAwait(false);
        try
        {
            var nonce = Math.Max(DateTimeOffset.UtcNow.ToUnixTimeMilliseconds(), _lastNonce + 1);
            var (result, via, failure) = await SubmitAsync(sign(nonce), ct).ConfigureAwait(false);
            if (result is { Applied: false } && result.LastNonce >= nonce)
            {
                // Our clock is behind the last command applied (another controller, or a clock set back): go above it.
                nonce = result.LastNonce + 1;
                (result, via, failure) = await SubmitAsync(sign(nonce), ct).ConfigureAwait(false);
            }
            _lastNonce = Math.Max(_lastNonce, nonce);
            return result is null
                ? new AdminCommandReport(false, "not applied: " + failure, null)
                : new AdminCommandReport(result.Applied, result.Reason, via);
        }
        finally
        {
            _one.Release();
        }
    }

    /// <summary>The agreed result and the pre-SQ that carried it, or why no pre-SQ did.</summary>
    private async Task<(AdminCommandResult? Result, string? Via, string? Failure)> SubmitAsync(byte[] command, CancellationToken ct)
    {
        var failures = new List<string>();
        foreach (var p in _config.PreSqs)
        {
            using var cts = CancellationTokenSource.CreateLinkedTokenSource(ct);
            cts.CancelAfter(_timeout);
            try
            {
                using var channel = GrpcChannel.ForAddress(new Uri(p.Url), p.Pin(), EnvelopeLimits.MaxReasonBytes * 16);
                var reply = await channel.UnaryAsync(ProtocolNames.PreSqService, ProtocolNames.SubmitAdminCommand,
                    new AdminCommandSubmission { Canonical = ByteString.CopyFrom(command) }, AdminCommandOutcome.Parser, cts.Token).ConfigureAwait(false);
                return (AdminCommandResultCodec.Decode(reply.Canonical.Span), p.Name, null);
            }
            catch (GrpcCallException e) when (e.Status is GrpcStatusCode.InvalidArgument or GrpcStatusCode.Unauthenticated)
            {
                // The pre-SQ refused the command itself; another one would too.
                return (null, null, $"{p.Name} refused the command: {e.Message}");
            }
            catch (MalformedEnvelopeException e)
            {
                failures.Add($"{p.Name}: unreadable result ({e.Message})");
            }
            catch (Exception e) when (e is GrpcCallException or HttpRequestException or IOException or OperationCanceledException or System.Net.Sockets.SocketException)
            {
                ct.ThrowIfCancellationRequested();
                failures.Add($"{p.Name}: {e.Message}");
            }
        }
        return (null, null, "no pre-SQ took the command: " + string.Join("; ", failures));
    }
}
