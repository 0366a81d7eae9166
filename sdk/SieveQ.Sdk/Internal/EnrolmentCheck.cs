using Microsoft.Extensions.Logging;
using SieveQ.Protocol;
using SieveQ.Protocol.V1;
using SieveQ.Sieve.Envelope;
using SieveQ.Sieve.Keys;
using SieveQ.Sieve.Replica;
using SieveQ.Transport;

namespace SieveQ.Sdk.Internal;

/// <summary>
/// The connect-time check: asks every replica-SQ (ReplicaSq.Enrolment) how this party stands and returns what f+1 of
/// them answered alike, or throws: <see cref="SieveQConfigurationException"/> when they agree it is not enrolled, or
/// revoked; <see cref="ConnectUnconfirmedException"/> when no f+1 agree within the connect time-out.
/// </summary>
internal static class EnrolmentCheck
{
    private const int MaxAnswerBytes = 64 * 1024;

    public static async Task<PartyStanding> AskAsync(SieveQClientConfiguration config, string party, int id, ILogger log, CancellationToken ct)
    {
        var kind = party == PartyKeyNames.Sender ? EnrolmentParty.Sender : EnrolmentParty.Receiver;
        var vote = new EnrolmentVote(config.F);
        string? lastError = null;
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(ct);
        deadline.CancelAfter(config.ConnectTimeout);
        var channels = config.Replicas.ToDictionary(r => r.Key, r => GrpcChannel.ForAddress(r.Value, config.ReplicaTlsPins.GetValueOrDefault(r.Key), MaxAnswerBytes));
        try
        {
            var pending = channels.Select(c => LookUpAsync(c.Key, c.Value, kind, id, deadline.Token)).ToList();
            while (pending.Count > 0)
            {
                var done = await Task.WhenAny(pending).ConfigureAwait(false);
                pending.Remove(done);
                var (replica, answer, error) = await done.ConfigureAwait(false);
                if (answer is null)
                {
                    lastError = $"replica-SQ {replica}: {error}";
                    log.LogDebug("enrolment lookup at replica-SQ {Replica} failed: {Reason}", replica, error);
                    continue;
                }
                if (vote.Add(replica, answer) is { } believed)
                {
                    return believed;
                }
            }
        }
        finally
        {
            await deadline.CancelAsync().ConfigureAwait(false);
            foreach (var c in channels.Values)
            {
                c.Dispose();
            }
        }
        ct.ThrowIfCancellationRequested();
        throw new ConnectUnconfirmedException($"{party} {id}", "its enrolment", vote.Answered, vote.MostAlike, vote.Needed, config.ConnectTimeout, lastError);
    }

    private static async Task<(int Replica, PartyStanding? Answer, string? Error)> LookUpAsync(int replica, GrpcChannel channel, EnrolmentParty kind, int id, CancellationToken ct)
    {
        try
        {
            var reply = await channel.UnaryAsync(ProtocolNames.ReplicaSqService, ProtocolNames.Enrolment, new EnrolmentLookup { Party = kind, Id = id }, EnrolmentStanding.Parser, ct)
                .ConfigureAwait(false);
            var standing = FromReply(reply, id);
            return standing is null ? (replica, null, "an answer outside the format (ignored)") : (replica, standing, null);
        }
        catch (OperationCanceledException) when (ct.IsCancellationRequested)
        {
            return (replica, null, "no answer within the connect time-out");
        }
#pragma warning disable CA1031 // a replica that cannot be asked is one answer fewer; the vote decides
        catch (Exception e)
#pragma warning restore CA1031
        {
            return (replica, null, e.Message);
        }
    }

    /// <summary>A replica's answer as a standing; an answer that breaks the format counts as none believed (its own state).</summary>
    private static PartyStanding? FromReply(EnrolmentStanding reply, int id)
    {
        var state = reply.State switch
        {
            EnrolmentState.Enrolled => PartyStandingState.Enrolled,
            EnrolmentState.Revoked => PartyStandingState.Revoked,
            EnrolmentState.NotEnrolled => PartyStandingState.NotEnrolled,
            _ => (PartyStandingState?)null,
        };
        if (state is null || (state == PartyStandingState.Enrolled && (reply.SignaturePublicKey.IsEmpty || reply.AgreementPublicKey.IsEmpty)))
        {
            return null;
        }
        List<Route>? routes = null;
        if (reply.RoutesFixed)
        {
            routes = new List<Route>(reply.Routes.Count);
            foreach (var r in reply.Routes.OrderBy(r => r.Receiver))
            {
                if (r.Receiver < 0 || r.MaxBytes is < 0 or > EnvelopeLimits.MaxDataBytes || (routes.Count > 0 && routes[^1].Receiver == r.Receiver))
                {
                    return null;
                }
                routes.Add(new Route(id, r.Receiver, r.MaxBytes));
            }
        }
        return new PartyStanding(state.Value, reply.Name, reply.SignaturePublicKey.ToByteArray(), reply.AgreementPublicKey.ToByteArray(), reply.ThroughOrdering)
        {
            Routes = routes,
        };
    }
}
