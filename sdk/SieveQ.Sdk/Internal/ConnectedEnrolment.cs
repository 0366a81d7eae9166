using System.Security.Cryptography;
using Microsoft.Extensions.Logging;
using SieveQ.Sieve.Keys;

namespace SieveQ.Sdk.Internal;

/// <summary>
/// What <c>ConnectAsync</c> checks before it opens anything: the running deployment (f+1 replica-SQs alike) has this
/// party enrolled, not revoked, with the very keys the configured key store holds. The configuration that comes out
/// carries the deployment's record of the party, so a sender or receiver enrolled through the ordering after the
/// application's enrolment file was written starts like one listed in it.
/// </summary>
internal static class ConnectedEnrolment
{
    public static async Task<SieveQClientConfiguration> ConfirmAsync(SieveQClientConfiguration config, string party, int id, ILogger log, CancellationToken ct)
    {
        ArgumentNullException.ThrowIfNull(config);
        config.Validate();
        ArgumentOutOfRangeException.ThrowIfNegative(id);
        var standing = await EnrolmentCheck.AskAsync(config, party, id, log, ct).ConfigureAwait(false);
        var agreeing = $"{config.F + 1} replica-SQs agree";
        switch (standing.State)
        {
            case PartyStandingState.NotEnrolled:
                throw new SieveQConfigurationException($"{party} {id} is not enrolled in the running deployment ({agreeing}): every message of it would be dropped; "
                    + $"enrol it first (`sieveq enrol request` on this host, then `sieveq enrol {party}` by an administrator)");
            case PartyStandingState.Revoked:
                throw new SieveQConfigurationException($"{party} {id} was revoked through the ordering ({agreeing}); a revoked id is never enrolled again: enrol this host under a new id");
        }
        CheckOwnKeys(config, party, id, standing, agreeing);
        log.LogInformation("{Party} {Id} ('{Name}') is enrolled in the running deployment{How} ({Agreeing})", party, id, standing.Name,
            standing.ThroughOrdering ? " through the ordering" : "", agreeing);
        var confirmed = config with { Enrolment = WithParty(config.Enrolment, party, id, standing, log) };
        // A sender's routes as the replicas run them now (changed through the ordering since any file was written).
        return party == PartyKeyNames.Sender ? confirmed with { Routes = standing.Routes } : confirmed;
    }

    private static void CheckOwnKeys(SieveQClientConfiguration config, string party, int id, PartyStanding standing, string agreeing)
    {
        var keys = config.Keys;
        var signName = config.SigningKeyName(party, id);
        var agreeName = config.AgreementKeyName(party, id);
        if (!keys.Exists(agreeName))
        {
            throw new SieveQConfigurationException($"no key-agreement key '{agreeName}' in the configured key store");
        }
        using (var signing = keys.OpenSigningKey(signName))
        {
            if (!CryptographicOperations.FixedTimeEquals(standing.SignaturePublicKey, signing.ExportSubjectPublicKeyInfo()))
            {
                throw new SieveQConfigurationException($"the signing key '{signName}' in the configured key store is not the one the running deployment enrolled for {party} {id} "
                    + $"('{standing.Name}', {agreeing}): every signature would be refused");
            }
        }
        if (!CryptographicOperations.FixedTimeEquals(standing.AgreementPublicKey, keys.ExportPublicKey(agreeName)))
        {
            throw new SieveQConfigurationException($"the key-agreement key '{agreeName}' in the configured key store is not the one the running deployment enrolled for {party} {id} "
                + $"('{standing.Name}', {agreeing}): no MAC would verify");
        }
    }

    private static Enrolment WithParty(Enrolment enrolment, string party, int id, PartyStanding standing, ILogger log)
    {
        if (party == PartyKeyNames.Sender)
        {
            var listed = enrolment.Senders.FirstOrDefault(s => s.Id == id);
            WarnIfStale(listed?.SignaturePublicKey, listed?.AgreementPublicKey, party, id, standing, log);
            return enrolment with
            {
                Senders = [.. enrolment.Senders.Where(s => s.Id != id), new EnrolledSender(id, standing.Name, standing.SignaturePublicKey, standing.AgreementPublicKey)],
            };
        }
        var receiver = enrolment.Receivers.FirstOrDefault(r => r.Id == id);
        WarnIfStale(receiver?.SignaturePublicKey, receiver?.AgreementPublicKey, party, id, standing, log);
        return enrolment with
        {
            Receivers = [.. enrolment.Receivers.Where(r => r.Id != id), new EnrolledReceiver(id, standing.Name, standing.SignaturePublicKey, standing.AgreementPublicKey)],
        };
    }

    private static void WarnIfStale(byte[]? signing, byte[]? agreement, string party, int id, PartyStanding standing, ILogger log)
    {
        if (signing is null)
        {
            return;
        }
        if (!signing.AsSpan().SequenceEqual(standing.SignaturePublicKey) || agreement is null || !agreement.AsSpan().SequenceEqual(standing.AgreementPublicKey))
        {
            log.LogWarning("the configured enrolment lists {Party} {Id} with other keys than the running deployment enrolled; the deployment's are used", party, id);
        }
    }
}
