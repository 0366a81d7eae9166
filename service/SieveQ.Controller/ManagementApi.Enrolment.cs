using Google.Protobuf;
using Microsoft.AspNetCore.Routing;
using SieveQ.Controller.Access;
using SieveQ.Protocol.V1;
using SieveQ.Sieve.Envelope;
using SieveQ.Transport;

namespace SieveQ.Controller;

/// <summary>
/// EnrolSender, RevokeSender, EnrolReceiver and RevokeReceiver: the changes `sieveq enrol sender|receiver|revoke` make
/// with the administrator key directly, here checked, audited and ordered through the same submitter as quarantines
/// (ops 5, 6, 9 and 10, signed under the enrolment domain). An enrolment is checked before anything is ordered (id,
/// name, both keys one P-256 SubjectPublicKeyInfo each, the proof of possession), so a malformed request costs the
/// deployment nothing; the replicas check it again and decide whether the id is free.
/// </summary>
public sealed partial class ManagementApi
{
    private void MapEnrolmentCalls(IEndpointRouteBuilder routes)
    {
        routes.MapGrpcMethod<SignedManagementRequest, ManagementActionReply>(ControllerNames.Service, ControllerNames.EnrolSender, SignedManagementRequest.Parser,
            call => HandleAsync(call, ControllerNames.EnrolSender, ManagementRole.Operator, EnrolSenderRequest.Parser, audited: true,
                (caller, request, ct) => EnrolAsync(caller, EnrolmentAsked.Of(request), ct)), MaxRequestBytes);
        routes.MapGrpcMethod<SignedManagementRequest, ManagementActionReply>(ControllerNames.Service, ControllerNames.EnrolReceiver, SignedManagementRequest.Parser,
            call => HandleAsync(call, ControllerNames.EnrolReceiver, ManagementRole.Operator, EnrolReceiverRequest.Parser, audited: true,
                (caller, request, ct) => EnrolAsync(caller, EnrolmentAsked.Of(request), ct)), MaxRequestBytes);
        MapPartyAction(routes, ControllerNames.RevokeSender, SenderActionRequest.Parser, r => (AdminOp.RevokeSender, r.Sender, r.Reason));
        MapPartyAction(routes, ControllerNames.RevokeReceiver, ReceiverActionRequest.Parser, r => (AdminOp.RevokeReceiver, r.Receiver, r.Reason));
    }

    private async Task<ManagementActionReply> EnrolAsync(CallerIdentity caller, EnrolmentAsked request, CancellationToken ct)
    {
        var action = request.Receiver ? "enrol-receiver" : "enrol-sender";
        CheckReason(request.Reason);
        var target = EnrolmentTarget(request);
        if (EnrolmentProblem(request) is { } problem)
        {
            await _audit.AppendAsync(caller.AuditActor, action, target, "refused: " + problem, ct).ConfigureAwait(false);
            throw new GrpcCallException(GrpcStatusCode.InvalidArgument, "enrolment refused: " + problem);
        }
        if (_commands is null)
        {
            var unapplied = await _audit.AppendAsync(caller.AuditActor, action, target, NoCommandKey, ct).ConfigureAwait(false);
            return new ManagementActionReply { Applied = false, Status = NoCommandKey, AuditSequence = unapplied.Sequence };
        }
        await _audit.AppendAsync(caller.AuditActor, action, target, "submitted to the ordering", ct).ConfigureAwait(false);
        var claim = new PartyEnrolmentClaim(request.Name, request.SignaturePublicKey.Memory, request.AgreementPublicKey.Memory, request.Proof.Memory);
        // The outcome is recorded even when the caller hangs up: the command may have been applied.
        var outcome = request.Receiver
            ? await _commands.EnrolReceiverAsync((int)request.Id, claim, CancellationToken.None).ConfigureAwait(false)
            : await _commands.EnrolSenderAsync((int)request.Id, claim, CancellationToken.None).ConfigureAwait(false);
        var status = outcome.Applied ? $"{outcome.Status} (agreed by f+1 replicas, via {outcome.Via})" : outcome.Status;
        var record = await _audit.AppendAsync(caller.AuditActor, action, target, Truncate((outcome.Applied ? "applied: " : "not applied: ") + status, 1000),
            CancellationToken.None).ConfigureAwait(false);
        return new ManagementActionReply { Applied = outcome.Applied, Status = status, AuditSequence = record.Sequence };
    }

    /// <summary>Why the request cannot be an enrolment, or null; the order of the checks names the first thing wrong.</summary>
    internal static string? EnrolmentProblem(EnrolSenderRequest request) => EnrolmentProblem(EnrolmentAsked.Of(request));

    private static string? EnrolmentProblem(EnrolmentAsked request)
    {
        if (request.Id > int.MaxValue)
        {
            return $"{request.Id} is not a {request.Role} id (0 for the next free id, or 1 to {int.MaxValue})";
        }
        if (EnrolmentProof.NameProblem(request.Name) is { } name)
        {
            return name;
        }
        if (request.SignaturePublicKey.Length is 0 or > EnrolmentProof.MaxKeyBytes || request.AgreementPublicKey.Length is 0 or > EnrolmentProof.MaxKeyBytes)
        {
            return $"each public key is a SubjectPublicKeyInfo of 1 to {EnrolmentProof.MaxKeyBytes} bytes";
        }
        return EnrolmentProof.Problem(new PartyEnrolmentClaim(request.Name, request.SignaturePublicKey.Memory, request.AgreementPublicKey.Memory, request.Proof.Memory));
    }

    /// <summary>The party as the audit record names it: id, name (only when it is a valid one: it is the requester's text) and signing key id.</summary>
    private static string EnrolmentTarget(EnrolmentAsked request)
    {
        var id = request.Id == 0 ? $"{request.Role} (next free id)" : $"{request.Role} {request.Id}";
        var name = EnrolmentProof.NameProblem(request.Name) is null ? $"'{request.Name}'" : "(malformed name)";
        var key = request.SignaturePublicKey.Length is > 0 and <= EnrolmentProof.MaxKeyBytes
            ? "signing key " + ManagementSignature.KeyIdOf(request.SignaturePublicKey.ToByteArray())
            : "no usable signing key";
        return WithReason($"{id} {name}, {key}", request.Reason);
    }

    /// <summary>A sender's or a receiver's enrolment request, read alike.</summary>
    private sealed record EnrolmentAsked(bool Receiver, uint Id, string Name, ByteString SignaturePublicKey, ByteString AgreementPublicKey, ByteString Proof, string Reason)
    {
        public string Role => Receiver ? "receiver" : "sender";

        public static EnrolmentAsked Of(EnrolSenderRequest r) => new(false, r.Sender, r.Name, r.SignaturePublicKey, r.AgreementPublicKey, r.Proof, r.Reason);

        public static EnrolmentAsked Of(EnrolReceiverRequest r) => new(true, r.Receiver, r.Name, r.SignaturePublicKey, r.AgreementPublicKey, r.Proof, r.Reason);
    }
}
