using Google.Protobuf;
using SieveQ.Protocol.V1;
using SieveQ.Sieve.Keys;

namespace SieveQ.ReplicaSq;

/// <summary>A party's standing as the wire's EnrolmentStanding.</summary>
internal static class EnrolmentReplies
{
    public static EnrolmentStanding ToReply(PartyStanding standing, long enrolmentVersion, IReadOnlyList<Sieve.Replica.Route>? routes = null)
    {
        var reply = Standing(standing, enrolmentVersion);
        if (routes is not null)
        {
            reply.RoutesFixed = true;
            reply.Routes.AddRange(routes.Select(r => new RouteLimit { Receiver = r.Receiver, MaxBytes = r.MaxBytes }));
        }
        return reply;
    }

    private static EnrolmentStanding Standing(PartyStanding standing, long enrolmentVersion) => new()
    {
        State = standing.State switch
        {
            PartyStandingState.Enrolled => EnrolmentState.Enrolled,
            PartyStandingState.Revoked => EnrolmentState.Revoked,
            _ => EnrolmentState.NotEnrolled,
        },
        Name = standing.Name,
        SignaturePublicKey = ByteString.CopyFrom(standing.SignaturePublicKey),
        AgreementPublicKey = ByteString.CopyFrom(standing.AgreementPublicKey),
        ThroughOrdering = standing.ThroughOrdering,
        EnrolmentVersion = enrolmentVersion,
    };
}
